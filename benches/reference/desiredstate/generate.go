package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/clustercache"
	"sigs.k8s.io/cluster-api/core/webhooks/admission"
	"sigs.k8s.io/cluster-api/exp/topology/desiredstate"
	"sigs.k8s.io/cluster-api/exp/topology/scope"
)

// noWorkloadClusters is the cluster cache of a management cluster whose Clusters have no
// workload cluster yet: the generator asks it only about MachinePools with nodes.
type noWorkloadClusters struct{ clustercache.ClusterCache }

// generate is the topology controller's first reconcile of a new Cluster, up to the desired
// state: the Cluster defaulted by the Cluster webhook (variables defaulted and validated against
// the class), its variables checked again as the controller does, the blueprint read, no current
// objects, then Cluster API's own Generator.
func generate(ctx context.Context, c client.Client, cluster *clusterv1.Cluster) ([]map[string]any, error) {
	class := &clusterv1.ClusterClass{}
	if err := c.Get(ctx, cluster.GetClassKey(), class); err != nil {
		return nil, fmt.Errorf("reading ClusterClass %s: %w", cluster.GetClassKey(), err)
	}
	if err := (&admission.Cluster{Client: c}).Default(ctx, cluster); err != nil {
		return nil, fmt.Errorf("defaulting the Cluster: %w", err)
	}
	if errs := (&admission.Cluster{}).DefaultAndValidateVariables(ctx, cluster, nil, class); len(errs) > 0 {
		return nil, fmt.Errorf("the Cluster's variables: %v", errs.ToAggregate())
	}
	s := scope.New(cluster)
	var err error
	if s.Blueprint, err = blueprintOf(ctx, c, cluster, class); err != nil {
		return nil, err
	}
	s.Current.ControlPlane = &scope.ControlPlaneState{}
	s.Current.MachineDeployments = scope.MachineDeploymentsStateMap{}
	s.Current.MachinePools = scope.MachinePoolsStateMap{}
	generator, err := desiredstate.NewGenerator(c, noWorkloadClusters{}, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	desired, err := generator.Generate(ctx, s)
	if err != nil {
		return nil, err
	}
	return ordered(desired)
}

// ordered lists the desired objects as `plan` prints them (see the package comment).
func ordered(desired *scope.ClusterState) ([]map[string]any, error) {
	objects := []runtime.Object{desired.Cluster, desired.InfrastructureCluster}
	if desired.ControlPlane.InfrastructureMachineTemplate != nil {
		objects = append(objects, desired.ControlPlane.InfrastructureMachineTemplate)
	}
	objects = append(objects, desired.ControlPlane.Object)
	if desired.ControlPlane.MachineHealthCheck != nil {
		objects = append(objects, desired.ControlPlane.MachineHealthCheck)
	}
	for _, name := range sortedKeys(desired.MachineDeployments) {
		md := desired.MachineDeployments[name]
		objects = append(objects, md.BootstrapTemplate, md.InfrastructureMachineTemplate, md.Object)
		if md.MachineHealthCheck != nil {
			objects = append(objects, md.MachineHealthCheck)
		}
	}
	for _, name := range sortedKeys(desired.MachinePools) {
		mp := desired.MachinePools[name]
		objects = append(objects, mp.BootstrapObject, mp.InfrastructureMachinePoolObject, mp.Object)
	}
	items := make([]map[string]any, 0, len(objects))
	for _, object := range objects {
		item, err := asJSON(object)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

// asJSON is an object as the API server would receive it: typed objects carry their kind, and
// the zero values their Go types always write (a null creationTimestamp, an empty status) are
// left out.
func asJSON(object runtime.Object) (map[string]any, error) {
	if typed, ok := object.(client.Object); ok && typed.GetObjectKind().GroupVersionKind().Kind == "" {
		kinds := map[string]string{"*v1beta2.Cluster": "Cluster", "*v1beta2.MachineDeployment": "MachineDeployment",
			"*v1beta2.MachinePool": "MachinePool", "*v1beta2.MachineHealthCheck": "MachineHealthCheck"}
		if kind, found := kinds[fmt.Sprintf("%T", object)]; found {
			object.GetObjectKind().SetGroupVersionKind(clusterv1.GroupVersion.WithKind(kind))
		}
	}
	raw, err := json.Marshal(object)
	if err != nil {
		return nil, err
	}
	var item map[string]any
	if err := json.Unmarshal(raw, &item); err != nil {
		return nil, err
	}
	if metadata, ok := item["metadata"].(map[string]any); ok && metadata["creationTimestamp"] == nil {
		delete(metadata, "creationTimestamp")
	}
	if status, ok := item["status"].(map[string]any); ok && len(status) == 0 {
		delete(item, "status")
	}
	return item, nil
}

// sortedKeys are a map's keys in order.
func sortedKeys[V any](values map[string]V) []string {
	keys := make([]string, 0, len(values))
	for key := range values {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}
