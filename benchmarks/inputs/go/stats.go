package main

import "fmt"
import "math"

type Sample []float64

func (s Sample) Mean() float64 {
	total := 0.0
	for _, x := range s {
		total += x
	}
	return total / float64(len(s))
}

func (s Sample) Variance() float64 {
	m := s.Mean()
	sum := 0.0
	for _, x := range s {
		d := x - m
		sum += d * d
	}
	return sum / float64(len(s)-1)
}

func (s Sample) Sorted() Sample {
	out := make(Sample, len(s))
	copy(out, s)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j-1] > out[j]; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

func (s Sample) Median() float64 {
	sorted := s.Sorted()
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func main() {
	var s Sample = []float64{2.5, 3.0, 1.25, 4.75, 3.5}
	factor := 2.0
	double := func(x float64) float64 {
		return x * factor
	}
	fmt.Println(s.Mean(), s.Median(), math.Sqrt(s.Variance()))
	fmt.Println(double(s.Median()))
}
