// A statically linked Go program (issue 19, decision 45): Go's runtime
// keeps its own thread-local data at %fs (not the ELF TLS ABI's thread
// pointer at fs:0), starts its threads with clone and sets their %fs base
// itself, preempts goroutines with signals and collects garbage. Under
// dgad its output must be the native one, byte for byte.
package main

import (
	"fmt"
	"math"
	"sort"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	res := make([]float64, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			s := 0.0
			m := map[int]float64{}
			for k := 1; k < 100000; k++ {
				s += math.Sin(float64(k*i)) / float64(k)
				if k%1000 == 0 {
					m[k] = s
				}
			}
			keys := make([]int, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Ints(keys)
			res[i] = s + m[keys[len(keys)-1]]
		}(i)
	}
	wg.Wait()
	for i, r := range res {
		fmt.Printf("%d %.17g\n", i, r)
	}
	buf := make([][]byte, 0)
	for i := 0; i < 2000; i++ {
		buf = append(buf, make([]byte, 10000))
	}
	fmt.Println("alloc", len(buf), math.Exp(1.5), math.Pow(2, 0.5))
}
