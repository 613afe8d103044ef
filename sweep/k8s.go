package sweep

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// JobOptions describe the Kubernetes Indexed Job that runs a sweep's
// shards: one pod per shard, all on one shared volume that holds the
// spec files, the data they name and the output folder.
type JobOptions struct {
	// Name is the Job's name (a DNS label).
	Name string
	// Files are the spec files, Out the output folder (empty: each file's
	// results/NAME): paths relative to the volume's root, which is the
	// pods' working directory.
	Files []string
	Out   string
	// Shards is the number of pods (completions), Parallelism how many run
	// at once (0: all).
	Shards, Parallelism int
	// Jobs is --jobs of each pod (0: the pod's cores).
	Jobs int
	// Image holds the kubesim binary as "kubesim" on its PATH.
	Image string
	// Claim is the PersistentVolumeClaim of the shared volume (ReadWriteMany
	// when shards run on several nodes), mounted at MountPath.
	Claim, MountPath string
	// CPU and Memory are each pod's requests (and limits), e.g. "2" and
	// "4Gi"; empty leaves them unset.
	CPU, Memory string
}

// dnsLabel is the form of a Job name.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// K8sJob builds the Indexed Job of opts: pod i runs `kubesim sweep FILES
// --out OUT --shard i/n` in the volume's root; `kubesim sweep merge OUT`
// then writes the tables.
func K8sJob(o JobOptions) (*batchv1.Job, error) {
	switch {
	case !dnsLabel.MatchString(o.Name):
		return nil, fmt.Errorf("job name %q: want a DNS label (lower-case letters, digits and '-', at most 63)", o.Name)
	case o.Shards < 1:
		return nil, fmt.Errorf("shards %d: must be positive", o.Shards)
	case len(o.Files) == 0:
		return nil, fmt.Errorf("no spec file")
	case o.Image == "" || o.Claim == "" || !filepath.IsAbs(o.MountPath):
		return nil, fmt.Errorf("image %q, claim %q, mount path %q: all needed, the mount path absolute", o.Image, o.Claim, o.MountPath)
	}
	for _, f := range append([]string{o.Out}, o.Files...) {
		if f == "" {
			continue
		}
		if filepath.IsAbs(f) || strings.HasPrefix(filepath.Clean(f), "..") {
			return nil, fmt.Errorf("%s: paths must be relative to the shared volume's root", f)
		}
	}
	par := o.Parallelism
	if par < 1 || par > o.Shards {
		par = o.Shards
	}
	args := append([]string{"sweep"}, o.Files...)
	if o.Out != "" {
		args = append(args, "--out", o.Out)
	}
	args = append(args, "--shard", "$(JOB_COMPLETION_INDEX)/"+strconv.Itoa(o.Shards))
	if o.Jobs > 0 {
		args = append(args, "--jobs", strconv.Itoa(o.Jobs))
	}
	var res corev1.ResourceRequirements
	if o.CPU != "" || o.Memory != "" {
		res.Requests, res.Limits = corev1.ResourceList{}, corev1.ResourceList{}
		for _, r := range []struct {
			name corev1.ResourceName
			v    string
		}{{corev1.ResourceCPU, o.CPU}, {corev1.ResourceMemory, o.Memory}} {
			name, v := r.name, r.v
			if v == "" {
				continue
			}
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("%s %q: %w", name, v, err)
			}
			res.Requests[name], res.Limits[name] = q, q
		}
	}
	mode := batchv1.IndexedCompletion
	n, p := int32(o.Shards), int32(par)
	backoff := int32(3)
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: map[string]string{"app.kubernetes.io/name": "kubesim-sweep"}},
		Spec: batchv1.JobSpec{
			CompletionMode: &mode,
			Completions:    &n,
			Parallelism:    &p,
			// a failed shard is re-run: its finished cells are cached
			BackoffLimitPerIndex: &backoff,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "kubesim-sweep"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name:       "sweep",
						Image:      o.Image,
						Command:    []string{"kubesim"},
						Args:       args,
						WorkingDir: o.MountPath,
						Env: []corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
							FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"},
						}}},
						Resources:    res,
						VolumeMounts: []corev1.VolumeMount{{Name: "work", MountPath: o.MountPath}},
					}},
					Volumes: []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{
						PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: o.Claim},
					}}},
				},
			},
		},
	}, nil
}

// WriteK8sJob writes the Job of opts as YAML, with a comment that says how
// to run it and merge the shards.
func WriteK8sJob(w io.Writer, o JobOptions) error {
	job, err := K8sJob(o)
	if err != nil {
		return fmt.Errorf("k8s job: %w", err)
	}
	b, err := yaml.Marshal(job)
	if err != nil {
		return fmt.Errorf("k8s job: %w", err)
	}
	out := o.Out
	if out == "" {
		out = "results/NAME"
	}
	head := fmt.Sprintf("# kubesim sweep in %d shards: kubectl apply -f this file; when the Job completes,\n"+
		"# run `kubesim sweep merge %s` in the volume's root (claim %s) for the tables.\n", o.Shards, out, o.Claim)
	_, err = io.WriteString(w, head+string(b))
	return err
}
