package dataset_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/kubesim/kubesim/dataset"
)

// Convert the trace fixtures once, then load the two hours from 24h to 26h
// of trace time with DAG dependencies. Container c_1 was deployed before the
// window, so it arrives at its start; job j_2's two tasks started at trace
// second 87076, i.e. 676 s into the window, and R2_1 waits for M1.
func Example() {
	out, err := os.MkdirTemp("", "kubesim-example-*")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(out)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sum, err := dataset.Convert(context.Background(), "testdata/alibaba-v2018", out, dataset.ConvertOptions{Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range sum.Tables {
		fmt.Printf("%s: %d rows\n", t.Table, t.Kept)
	}
	win, err := dataset.ParseWindow("24h-26h")
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := dataset.Load(out, dataset.LoadOptions{Window: win, DAG: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(w.Nodes), "nodes,", len(w.Pods), "pods, window", w.End)
	for _, p := range w.Pods {
		fmt.Println(p.Name, p.Priority, p.Arrival, p.Requests, p.Duration, p.After)
	}
	// Output:
	// machine_meta: 40 rows
	// machine_usage: 40 rows
	// container_meta: 3 rows
	// container_usage: 4 rows
	// batch_task: 40 rows
	// 10 nodes, 3 pods, window 7200.000s
	// c_1 high 0.000s 4000m/6134Mi 0.000s []
	// j_2/R2_1/1 low 676.000s 500m/786Mi 10.000s [2]
	// j_2/M1/1 low 676.000s 500m/786Mi 7.000s []
}
