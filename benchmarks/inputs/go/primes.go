package main

import "fmt"

func gcd(a int, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a int, b int) int {
	return a / gcd(a, b) * b
}

func isPrime(n int) bool {
	if n < 2 {
		return false
	}
	for d := 2; d*d <= n; d++ {
		if n%d == 0 {
			return false
		}
	}
	return true
}

func sieve(limit int) []int {
	composite := make([]bool, limit+1)
	primes := []int{}
	for i := 2; i <= limit; i++ {
		if composite[i] {
			continue
		}
		primes = append(primes, i)
		for j := i * i; j <= limit; j += i {
			composite[j] = true
		}
	}
	return primes
}

func main() {
	primes := sieve(100)
	fmt.Println(len(primes), primes)
	for _, p := range primes {
		if !isPrime(p) {
			panic(p)
		}
	}
	fmt.Println(gcd(84, 36), lcm(4, 6))
}
