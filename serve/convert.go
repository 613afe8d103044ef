package serve

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubesim/kubesim/sim"
)

// What the service reads from the Kubernetes objects, and what it assumes.
//
// Pod (ExtenderArgs.Pod):
//   - requests: spec.containers[*].resources.requests, summed; a container
//     without a cpu or memory request takes its limit (the API server's
//     defaulting); init containers count as kube-scheduler counts them (the
//     largest regular one against the sum, restartable sidecars added);
//     spec.overhead is added. Limits are summed the same way.
//   - cpu and memory are read; ephemeral-storage, hugepages-* and extended
//     resources (a name with a domain, "example.com/gpu") are accepted and
//     ignored (kube-scheduler's own filters check them); any other name is
//     an error.
//   - spec.tolerations, spec.nodeSelector and
//     spec.affinity.nodeAffinity (required and preferred terms with
//     matchExpressions; Gt, Lt and matchFields are refused).
//   - spec.priority: above 0 is the high (online) class, else batch.
//   - spec.activeDeadlineSeconds as the pod's duration, else a long-running
//     service; metadata.creationTimestamp for the time it has waited.
//   - the controller owner reference (namespace/kind/name) as its group for
//     PodTopologySpread; no controller, no group.
//
// Node (ExtenderArgs.Nodes, or the node cache for NodeNames):
//   - status.allocatable cpu, memory (both required, positive) and pods
//     (default 110); metadata.labels (zone: topology.kubernetes.io/zone);
//     spec.taints; spec.unschedulable as the
//     node.kubernetes.io/unschedulable:NoSchedule taint.
//   - requested resources and pod count from the annotations
//     AnnotationRequestedCPU, AnnotationRequestedMemory and AnnotationPods
//     when present, else estimated from the pods the service has placed
//     there (its Ledger; assumed, not observed); actual use from
//     AnnotationUsedCPU and AnnotationUsedMemory, else equal to the
//     requests (sim's assumption for a pod without a usage profile).

// Node annotations read for a node's state (quantities: "4", "3500m", "8Gi").
const (
	AnnotationRequestedCPU    = "kubesim.io/requested-cpu"
	AnnotationRequestedMemory = "kubesim.io/requested-memory"
	AnnotationPods            = "kubesim.io/pods"
	AnnotationUsedCPU         = "kubesim.io/used-cpu"
	AnnotationUsedMemory      = "kubesim.io/used-memory"
)

// Bounds beyond which a quantity is absurd and refused.
var (
	maxCPU    = resource.MustParse("1M")  // a million cores
	maxMemory = resource.MustParse("1Pi") // a pebibyte
	maxPods   = resource.MustParse("1M")
)

// unschedulableTaint is the taint the node lifecycle controller sets on a
// cordoned node (spec.unschedulable).
const unschedulableTaint = "node.kubernetes.io/unschedulable"

// InputError is a request the service refuses: Status (a 4xx) and a message
// that names the field at fault.
type InputError struct {
	Status int
	Field  string
	Msg    string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func badf(field, format string, a ...any) *InputError {
	return &InputError{Status: http.StatusBadRequest, Field: field, Msg: fmt.Sprintf(format, a...)}
}

func unprocessablef(field, format string, a ...any) *InputError {
	return &InputError{Status: http.StatusUnprocessableEntity, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// pod is a converted pod: its spec and what the service keeps of it.
type pod struct {
	spec    sim.PodSpec
	key     string   // namespace/name, or the UID when set
	waited  sim.Time // since creation, 0 when unknown
	grouped bool
}

// convertPod reads a pod as the package comment above says; now is the wall
// clock for the time it has waited.
func convertPod(p *corev1.Pod, now time.Time) (*pod, error) {
	const f = "pod"
	if p == nil {
		return nil, badf(f, "missing")
	}
	out := &pod{spec: sim.PodSpec{Name: p.Namespace + "/" + p.Name}, key: podKey(p)}
	req, lim, err := podResources(p)
	if err != nil {
		return nil, err
	}
	out.spec.Requests, out.spec.Limits = req, lim
	if r := out.spec.Requests; r.CPU > maxCPU.MilliValue() || r.Mem > maxMemory.Value()>>20 {
		return nil, unprocessablef(f+".spec", "requests %v in all are absurd (bounds %s CPU, %s memory)", r, maxCPU.String(), maxMemory.String())
	}
	if p.Spec.Priority != nil && *p.Spec.Priority > 0 {
		out.spec.Priority = sim.High
	}
	if d := p.Spec.ActiveDeadlineSeconds; d != nil {
		if *d <= 0 || *d > 10*365*86400 {
			return nil, unprocessablef(f+".spec.activeDeadlineSeconds", "%d outside (0, 10 years]", *d)
		}
		out.spec.Duration = sim.Time(*d) * sim.Second
	}
	if !p.CreationTimestamp.IsZero() {
		out.waited = sim.Time(max(now.Sub(p.CreationTimestamp.Time), 0) / time.Millisecond)
	}
	for i, t := range p.Spec.Tolerations {
		tol, err := convertToleration(t, fmt.Sprintf("%s.spec.tolerations[%d]", f, i))
		if err != nil {
			return nil, err
		}
		out.spec.Tolerations = append(out.spec.Tolerations, tol)
	}
	aff, err := convertAffinity(&p.Spec)
	if err != nil {
		return nil, err
	}
	out.spec.Affinity = aff
	out.spec.Group = podGroup(p)
	out.grouped = out.spec.Group != ""
	return out, nil
}

// podResources returns a pod's requests and limits as kube-scheduler
// counts them: the containers summed, init containers as the largest
// regular one against the sum (restartable sidecars added to the sum), and
// spec.overhead added to the requests.
func podResources(p *corev1.Pod) (req, lim sim.Resources, err error) {
	const f = "pod"
	var sum, sumLim sim.Resources
	for i := range p.Spec.Containers {
		r, l, err := containerResources(&p.Spec.Containers[i], fmt.Sprintf("%s.spec.containers[%d]", f, i))
		if err != nil {
			return req, lim, err
		}
		sum, sumLim = sum.Add(r), sumLim.Add(l)
	}
	var initMax, initMaxLim sim.Resources
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		r, l, err := containerResources(c, fmt.Sprintf("%s.spec.initContainers[%d]", f, i))
		if err != nil {
			return req, lim, err
		}
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum, sumLim = sum.Add(r), sumLim.Add(l) // a sidecar runs beside the containers
			continue
		}
		initMax = sim.Resources{CPU: max(initMax.CPU, r.CPU), Mem: max(initMax.Mem, r.Mem)}
		initMaxLim = sim.Resources{CPU: max(initMaxLim.CPU, l.CPU), Mem: max(initMaxLim.Mem, l.Mem)}
	}
	over, err := resources(p.Spec.Overhead, f+".spec.overhead", true)
	if err != nil {
		return req, lim, err
	}
	req = sim.Resources{CPU: max(sum.CPU, initMax.CPU), Mem: max(sum.Mem, initMax.Mem)}.Add(over)
	lim = sim.Resources{CPU: max(sumLim.CPU, initMaxLim.CPU), Mem: max(sumLim.Mem, initMaxLim.Mem)}
	return req, lim, nil
}

// podGroup is a pod's group for PodTopologySpread: its controller owner
// reference as namespace/kind/name, or "" without a controller.
func podGroup(p *corev1.Pod) string {
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return p.Namespace + "/" + o.Kind + "/" + o.Name
		}
	}
	return ""
}

// podKey is how the service names a pod: its UID, or namespace/name
// without one.
func podKey(p *corev1.Pod) string {
	if p.UID != "" {
		return string(p.UID)
	}
	return p.Namespace + "/" + p.Name
}

// containerResources returns a container's requests and limits, a missing
// request taking its limit.
func containerResources(c *corev1.Container, field string) (req, lim sim.Resources, err error) {
	if req, err = resources(c.Resources.Requests, field+".resources.requests", true); err != nil {
		return req, lim, err
	}
	if lim, err = resources(c.Resources.Limits, field+".resources.limits", true); err != nil {
		return req, lim, err
	}
	if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
		req.CPU = lim.CPU
	}
	if _, ok := c.Resources.Requests[corev1.ResourceMemory]; !ok {
		req.Mem = lim.Mem
	}
	return req, lim, nil
}

// resources reads cpu and memory from a resource list, checks every other
// name, and refuses negative and absurd quantities. Memory rounds up to MiB
// for a request (up) and down for a capacity (up false).
func resources(rl corev1.ResourceList, field string, up bool) (sim.Resources, error) {
	var r sim.Resources
	for _, name := range sortedNames(rl) {
		q := rl[name]
		fn := fmt.Sprintf("%s[%s]", field, string(name))
		if q.Sign() < 0 {
			return r, unprocessablef(fn, "negative quantity %s", q.String())
		}
		switch name {
		case corev1.ResourceCPU:
			if q.Cmp(maxCPU) > 0 {
				return r, unprocessablef(fn, "absurd quantity %s (more than %s cores)", q.String(), maxCPU.String())
			}
			r.CPU = q.MilliValue()
		case corev1.ResourceMemory:
			if q.Cmp(maxMemory) > 0 {
				return r, unprocessablef(fn, "absurd quantity %s (more than %s)", q.String(), maxMemory.String())
			}
			r.Mem = mib(q.Value(), up)
		case corev1.ResourcePods:
			if q.Cmp(maxPods) > 0 {
				return r, unprocessablef(fn, "absurd quantity %s (more than %s)", q.String(), maxPods.String())
			}
		case corev1.ResourceEphemeralStorage, corev1.ResourceStorage:
		default:
			if !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) && !strings.Contains(string(name), "/") {
				return r, badf(fn, "unknown resource name (known: cpu, memory, pods, ephemeral-storage, hugepages-<size>, <domain>/<name>)")
			}
		}
	}
	return r, nil
}

func sortedNames(rl corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(rl))
	for n := range rl {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// mib converts bytes to MiB, rounding up or down.
func mib(b int64, up bool) int64 {
	if up {
		return (b + 1<<20 - 1) >> 20
	}
	return b >> 20
}

func convertEffect(e corev1.TaintEffect, field string) (sim.TaintEffect, error) {
	switch e {
	case corev1.TaintEffectNoSchedule:
		return sim.NoSchedule, nil
	case corev1.TaintEffectPreferNoSchedule:
		return sim.PreferNoSchedule, nil
	case corev1.TaintEffectNoExecute:
		return sim.NoExecute, nil
	}
	return 0, badf(field, "unknown taint effect %q", string(e))
}

func convertToleration(t corev1.Toleration, field string) (sim.Toleration, error) {
	tol := sim.Toleration{Key: t.Key, Value: t.Value}
	switch t.Operator {
	case corev1.TolerationOpExists:
		tol.Exists = true
	case corev1.TolerationOpEqual, "":
	default:
		return tol, badf(field+".operator", "unknown operator %q", string(t.Operator))
	}
	if t.Effect != "" {
		e, err := convertEffect(t.Effect, field+".effect")
		if err != nil {
			return tol, err
		}
		tol.Effect = e
	}
	return tol, nil
}

// convertAffinity reads spec.nodeSelector and the node affinity: the
// selector's requirements are ANDed into every required term (one term of
// its own when there are none).
func convertAffinity(s *corev1.PodSpec) (*sim.Affinity, error) {
	var sel sim.Term
	keys := make([]string, 0, len(s.NodeSelector))
	for k := range s.NodeSelector {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		sel = append(sel, sim.Requirement{Key: k, Op: sim.OpIn, Values: []string{s.NodeSelector[k]}})
	}
	var a sim.Affinity
	var na *corev1.NodeAffinity
	if s.Affinity != nil {
		na = s.Affinity.NodeAffinity
	}
	const f = "pod.spec.affinity.nodeAffinity"
	if na != nil && na.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for i, t := range na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			term, err := convertTerm(t, fmt.Sprintf("%s.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[%d]", f, i))
			if err != nil {
				return nil, err
			}
			if len(term) > 0 { // an empty term matches nothing upstream; kept so
				term = append(term, sel...)
			}
			a.Required = append(a.Required, term)
		}
	}
	if len(a.Required) == 0 && len(sel) > 0 {
		a.Required = []sim.Term{sel}
	}
	if na != nil {
		for i, pt := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			field := fmt.Sprintf("%s.preferredDuringSchedulingIgnoredDuringExecution[%d]", f, i)
			if pt.Weight < 1 || pt.Weight > 100 {
				return nil, unprocessablef(field+".weight", "%d outside [1, 100]", pt.Weight)
			}
			term, err := convertTerm(pt.Preference, field+".preference")
			if err != nil {
				return nil, err
			}
			a.Preferred = append(a.Preferred, sim.PreferredTerm{Weight: pt.Weight, Term: term})
		}
	}
	if len(a.Required) == 0 && len(a.Preferred) == 0 {
		return nil, nil
	}
	return &a, nil
}

func convertTerm(t corev1.NodeSelectorTerm, field string) (sim.Term, error) {
	if len(t.MatchFields) > 0 {
		return nil, unprocessablef(field+".matchFields", "not supported (use matchExpressions on labels)")
	}
	var term sim.Term
	for j, r := range t.MatchExpressions {
		req := sim.Requirement{Key: r.Key, Values: r.Values}
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			req.Op = sim.OpIn
		case corev1.NodeSelectorOpNotIn:
			req.Op = sim.OpNotIn
		case corev1.NodeSelectorOpExists:
			req.Op = sim.OpExists
		case corev1.NodeSelectorOpDoesNotExist:
			req.Op = sim.OpDoesNotExist
		default:
			return nil, unprocessablef(fmt.Sprintf("%s.matchExpressions[%d].operator", field, j), "%q not supported (In, NotIn, Exists, DoesNotExist)", string(r.Operator))
		}
		term = append(term, req)
	}
	return term, nil
}

// node is a converted node: its spec and which parts of its state came from
// annotations.
type node struct {
	spec      sim.NodeSpec
	requested sim.Resources
	used      sim.Resources
	pods      int32
	annotated bool    // requested and pods came from annotations (a missing one of the three is 0)
	usedKnown [2]bool // used CPU, memory came from annotations (else equal to requested)
}

// convertNode reads a node as the package comment above says; field names
// it in errors ("nodes.items[3]").
func convertNode(n *corev1.Node, field string) (*node, error) {
	if n.Name == "" {
		return nil, badf(field+".metadata.name", "missing")
	}
	field = fmt.Sprintf("%s (%s)", field, n.Name)
	alloc, err := resources(n.Status.Allocatable, field+".status.allocatable", false)
	if err != nil {
		return nil, err
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := n.Status.Allocatable[name]; !ok || q.Sign() <= 0 || (name == corev1.ResourceMemory && alloc.Mem == 0) {
			return nil, unprocessablef(fmt.Sprintf("%s.status.allocatable[%s]", field, string(name)), "missing or not positive")
		}
	}
	out := &node{spec: sim.NodeSpec{Name: n.Name, Allocatable: alloc, MaxPods: sim.DefaultMaxPods, Labels: n.Labels}}
	if q, ok := n.Status.Allocatable[corev1.ResourcePods]; ok {
		out.spec.MaxPods = int32(q.Value()) // bounded by resources
	}
	for i, t := range n.Spec.Taints {
		e, err := convertEffect(t.Effect, fmt.Sprintf("%s.spec.taints[%d].effect", field, i))
		if err != nil {
			return nil, err
		}
		out.spec.Taints = append(out.spec.Taints, sim.Taint{Key: t.Key, Value: t.Value, Effect: e})
	}
	if n.Spec.Unschedulable && !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
		return t.Key == unschedulableTaint && t.Effect == corev1.TaintEffectNoSchedule
	}) {
		out.spec.Taints = append(out.spec.Taints, sim.Taint{Key: unschedulableTaint, Effect: sim.NoSchedule})
	}
	ann := func(key string, max resource.Quantity) (int64, bool, error) {
		s, ok := n.Annotations[key]
		if !ok {
			return 0, false, nil
		}
		fn := fmt.Sprintf("%s.metadata.annotations[%s]", field, key)
		q, err := resource.ParseQuantity(s)
		if err != nil {
			return 0, false, badf(fn, "not a quantity: %q", s)
		}
		if q.Sign() < 0 || q.Cmp(max) > 0 {
			return 0, false, unprocessablef(fn, "%s outside [0, %s]", q.String(), max.String())
		}
		switch key {
		case AnnotationRequestedCPU, AnnotationUsedCPU:
			return q.MilliValue(), true, nil
		case AnnotationRequestedMemory, AnnotationUsedMemory:
			return mib(q.Value(), true), true, nil
		}
		return q.Value(), true, nil
	}
	var okC, okM, okP, okUC, okUM bool
	var pods int64
	if out.requested.CPU, okC, err = ann(AnnotationRequestedCPU, maxCPU); err != nil {
		return nil, err
	}
	if out.requested.Mem, okM, err = ann(AnnotationRequestedMemory, maxMemory); err != nil {
		return nil, err
	}
	if pods, okP, err = ann(AnnotationPods, maxPods); err != nil {
		return nil, err
	}
	out.pods = int32(pods)
	if out.used.CPU, okUC, err = ann(AnnotationUsedCPU, maxCPU); err != nil {
		return nil, err
	}
	if out.used.Mem, okUM, err = ann(AnnotationUsedMemory, maxMemory); err != nil {
		return nil, err
	}
	out.annotated = okC || okM || okP
	out.usedKnown = [2]bool{okUC, okUM}
	return out, nil
}
