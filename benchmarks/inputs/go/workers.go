package main

import "fmt"
import "sync"
import "errors"

const emptyMessage = "empty input"

var errEmpty = errors.New(emptyMessage)

func sumSquares(xs []int) (int, error) {
	if len(xs) == 0 {
		return 0, errEmpty
	}
	total := 0
	for _, x := range xs {
		total += x * x
	}
	return total, nil
}

func parallelSums(chunks [][]int) []int {
	results := make([]int, len(chunks))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, chunk := range chunks {
		wg.Add(1)
		go func(i int, chunk []int) {
			defer wg.Done()
			s, err := sumSquares(chunk)
			if err != nil {
				return
			}
			mu.Lock()
			results[i] = s
			mu.Unlock()
		}(i, chunk)
	}
	wg.Wait()
	return results
}

func split(xs []int, size int) [][]int {
	var out [][]int
	for start := 0; start < len(xs); start += size {
		end := start + size
		if end > len(xs) {
			end = len(xs)
		}
		out = append(out, xs[start:end])
	}
	return out
}

func main() {
	xs := make([]int, 0, 100)
	for i := 1; i <= 100; i++ {
		xs = append(xs, i)
	}
	sums := parallelSums(split(xs, 16))
	fmt.Println(sums)
	if _, err := sumSquares(nil); err != nil {
		fmt.Println(err)
	}
}
