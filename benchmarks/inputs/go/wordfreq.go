package main

import "fmt"
import "strings"

const text = "the quick brown fox jumps over the lazy dog the end"

func countWords(s string) map[string]int {
	counts := map[string]int{}
	for _, w := range strings.Fields(s) {
		counts[strings.ToLower(w)]++
	}
	return counts
}

func mostFrequent(counts map[string]int) (string, int) {
	best := ""
	bestCount := 0
	for w, c := range counts {
		if c > bestCount || c == bestCount && w < best {
			best, bestCount = w, c
		}
	}
	return best, bestCount
}

func longest(words []string) string {
	result := ""
	for _, w := range words {
		if len(w) > len(result) {
			result = w
		}
	}
	return result
}

func reverse(words []string) []string {
	out := make([]string, 0, len(words))
	for i := len(words) - 1; i >= 0; i-- {
		out = append(out, words[i])
	}
	return out
}

func main() {
	counts := countWords(text)
	word, n := mostFrequent(counts)
	fmt.Println(word, n, len(counts))
	words := strings.Fields(text)
	fmt.Println(longest(words))
	sep := " "
	fmt.Println(strings.Join(reverse(words), sep))
}
