package functions

import "math"

// splitmix64 advances *x and returns the next output of the SplitMix64
// generator.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// stream returns a generator state that depends only on key and the
// indices.
func stream(key uint64, idx ...uint64) uint64 {
	x := key
	for _, i := range idx {
		x ^= i * 0xd1b54a32d192ed03
		splitmix64(&x)
	}
	return x
}

// uniform returns a float in [0, 1) from the generator state *x.
func uniform(x *uint64) float64 { return float64(splitmix64(x)>>11) / (1 << 53) }

// normal returns a standard normal number from the generator state *x
// (Box–Muller).
func normal(x *uint64) float64 {
	u1 := (float64(splitmix64(x)>>11) + 1) / (1 << 53) // in (0, 1]
	u2 := uniform(x)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// Key mixes a seed and a name (a trial id, say) into a key for a Run.
func Key(seed uint64, name string) uint64 {
	h := uint64(14695981039346656037) // FNV-1a
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	x := seed ^ h
	return splitmix64(&x)
}
