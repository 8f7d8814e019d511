// Command desiredstate prints Cluster API v1.14.0's own desired state (the objects its topology
// controller would create) for fixtures of ClusterClasses, templates and Clusters, so
// that capi-topology's `plan -o json` can be compared with it field for field
// (tests/fidelity.rs, docs/fidelity.md).
//
// Usage: go run ./desiredstate FIXTURE... (in benches/reference). A fixture is a directory (every
// manifest directly in it) or a comma-separated list of manifest files; the output is one JSON document on stdout:
//
//	{"fixtures": [{"fixture": FIXTURE, "clusters": [{"name": NS/NAME, "items": [...]} | {"name": ..., "error": "..."}]} | {"fixture": FIXTURE, "error": "..."}]}
//
// where items are the desired objects in the order `plan` prints them: the Cluster, the
// infrastructure cluster, the control plane's machine template, the control plane and its
// MachineHealthCheck, then per MachineDeployment topology (by name) its bootstrap and
// infrastructure templates, the MachineDeployment and its MachineHealthCheck, then per MachinePool
// topology its bootstrap and infrastructure objects and the MachinePool.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"sigs.k8s.io/cluster-api/feature"
)

// fixtureResult is what one fixture gave.
type fixtureResult struct {
	Dir      string          `json:"fixture"`
	Error    string          `json:"error,omitempty"`
	Clusters []clusterResult `json:"clusters,omitempty"`
}

// clusterResult is one Cluster's desired state, or why it has none.
type clusterResult struct {
	Name  string           `json:"name"`
	Error string           `json:"error,omitempty"`
	Items []map[string]any `json:"items,omitempty"`
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: desiredstate FIXTURE...")
		os.Exit(2)
	}
	ctrllog.SetLogger(logr.Discard())
	// The topology controller's gate. RuntimeSDK stays off: no Runtime Extension is called
	// (classes with external patches are reported as errors), as `plan` without ExtensionConfigs.
	if err := feature.MutableGates.Set("ClusterTopology=true,RuntimeSDK=false"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	results := make([]fixtureResult, 0, len(os.Args)-1)
	for _, dir := range os.Args[1:] {
		results = append(results, desiredStateOf(ctx, dir))
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(map[string]any{"fixtures": results}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// desiredStateOf loads one fixture and computes the desired state of each of its Clusters.
func desiredStateOf(ctx context.Context, dir string) fixtureResult {
	result := fixtureResult{Dir: dir}
	loaded, err := load(dir)
	if err != nil {
		result.Error = err.Error()
		return result
	}
	for _, cluster := range loaded.clusters {
		named := clusterResult{Name: cluster.Namespace + "/" + cluster.Name}
		items, err := generate(ctx, loaded.client, cluster)
		if err != nil {
			named.Error = err.Error()
		} else {
			named.Items = items
		}
		result.Clusters = append(result.Clusters, named)
	}
	return result
}
