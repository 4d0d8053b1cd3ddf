package main

import "fmt"

type Matrix [][]int

func identity(n int) Matrix {
	m := make(Matrix, n)
	for i := range m {
		m[i] = make([]int, n)
		m[i][i] = 1
	}
	return m
}

func (a Matrix) Mul(b Matrix) Matrix {
	n := len(a)
	out := make(Matrix, n)
	for i := 0; i < n; i++ {
		out[i] = make([]int, len(b[0]))
		for j := 0; j < len(b[0]); j++ {
			sum := 0
			for k := 0; k < len(b); k++ {
				sum += a[i][k] * b[k][j]
			}
			out[i][j] = sum
		}
	}
	return out
}

func (a Matrix) Power(e int) Matrix {
	result := identity(len(a))
	base := a
	for e > 0 {
		if e&1 == 1 {
			result = result.Mul(base)
		}
		base = base.Mul(base)
		e >>= 1
	}
	return result
}

func (a Matrix) Transpose() Matrix {
	out := make(Matrix, len(a[0]))
	for j := range out {
		out[j] = make([]int, len(a))
		for i := range a {
			out[j][i] = a[i][j]
		}
	}
	return out
}

func fibonacci(n int) int {
	var m Matrix = [][]int{{1, 1}, {1, 0}}
	return m.Power(n)[0][1]
}

func main() {
	for i := 0; i < 10; i++ {
		fmt.Println(i, fibonacci(i))
	}
	fmt.Println(identity(3).Transpose())
}
