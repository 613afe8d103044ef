package sweep

import (
	"bytes"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

// TestK8sJob: the manifest decodes strictly (unknown fields are errors)
// into batch/v1's Job, as an Indexed Job of one pod per shard that runs
// its shard on the shared volume.
func TestK8sJob(t *testing.T) {
	var buf bytes.Buffer
	o := JobOptions{Name: "load-sweep", Files: []string{"experiments/load.yaml"}, Out: "results/load", Shards: 8, Parallelism: 4,
		Jobs: 2, Image: "ghcr.io/kubesim/kubesim:latest", Claim: "kubesim-work", MountPath: "/work", CPU: "2", Memory: "4Gi"}
	if err := WriteK8sJob(&buf, o); err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(buf.Bytes(), &job); err != nil {
		t.Fatalf("decoding the manifest: %v\n%s", err, buf.String())
	}
	s := job.Spec
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || job.Name != "load-sweep" ||
		s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 8 || *s.Parallelism != 4 {
		t.Fatalf("job %+v", job)
	}
	c := s.Template.Spec.Containers[0]
	want := "sweep experiments/load.yaml --out results/load --shard $(JOB_COMPLETION_INDEX)/8 --jobs 2"
	if got := strings.Join(c.Args, " "); got != want || c.WorkingDir != "/work" || c.Command[0] != "kubesim" {
		t.Errorf("args %q in %s; want %q in /work", got, c.WorkingDir, want)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "JOB_COMPLETION_INDEX" || !strings.Contains(c.Env[0].ValueFrom.FieldRef.FieldPath, "job-completion-index") {
		t.Errorf("env %+v", c.Env)
	}
	if c.Resources.Requests.Cpu().String() != "2" || c.Resources.Limits.Memory().String() != "4Gi" {
		t.Errorf("resources %+v", c.Resources)
	}
	if v := s.Template.Spec.Volumes[0]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != "kubesim-work" {
		t.Errorf("volume %+v", v)
	}

	for _, tc := range []struct {
		name string
		edit func(*JobOptions)
		want string
	}{
		{"bad name", func(o *JobOptions) { o.Name = "Load_Sweep" }, "DNS label"},
		{"no shards", func(o *JobOptions) { o.Shards = 0 }, "shards 0"},
		{"absolute path", func(o *JobOptions) { o.Out = "/results/x" }, "relative to the shared volume"},
		{"bad memory", func(o *JobOptions) { o.Memory = "lots" }, `memory "lots"`},
	} {
		bad := o
		tc.edit(&bad)
		if err := WriteK8sJob(&buf, bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error mentioning %q", tc.name, err, tc.want)
		}
	}
}
