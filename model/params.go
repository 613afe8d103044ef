package model

import "fmt"

// LogitWeights appends to dst the weights that the action logits depend on
// (every parameter but the value head's), flattened in the order of the
// checkpoint, and returns it. Derivative-free searches (evolution
// strategies) perturb this vector and write it back with SetLogitWeights.
func (p *Policy) LogitWeights(dst []float64) []float64 {
	dst = dst[:0]
	for _, i := range p.logitParams {
		switch s := p.params[i].Value.Data().(type) {
		case []float32:
			for _, v := range s {
				dst = append(dst, float64(v))
			}
		case []float64:
			dst = append(dst, s...)
		}
	}
	return dst
}

// NumLogitWeights is the length of LogitWeights' vector.
func (p *Policy) NumLogitWeights() int {
	n := 0
	for _, i := range p.logitParams {
		n += p.params[i].Value.Shape().TotalSize()
	}
	return n
}

// SetLogitWeights writes v (LogitWeights' layout) into the policy; the
// value head, Adam's moments and the metadata are left as they are. A
// vector of another length is an error.
func (p *Policy) SetLogitWeights(v []float64) error {
	if n := p.NumLogitWeights(); len(v) != n {
		return fmt.Errorf("model: %d logit weights, the policy has %d", len(v), n)
	}
	for _, i := range p.logitParams {
		switch s := p.params[i].Value.Data().(type) {
		case []float32:
			for j := range s {
				s[j] = float32(v[j])
			}
			v = v[len(s):]
		case []float64:
			copy(s, v)
			v = v[len(s):]
		}
	}
	return nil
}
