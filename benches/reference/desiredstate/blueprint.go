package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/external"
	"sigs.k8s.io/cluster-api/exp/topology/scope"
)

// blueprintOf gathers what the topology controller reads for a Cluster of `class` (its
// getBlueprint lives in a package of the reconciler that is not meant for reuse, so this is the
// same gathering written again): the class, the Cluster's topology, and every template the class
// references, read from the API server at the apiVersion the class names; the health checks of
// the control plane (only when the class gives it machine infrastructure) and of each
// MachineDeployment class; each worker class's metadata.
func blueprintOf(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, class *clusterv1.ClusterClass) (*scope.ClusterBlueprint, error) {
	namespace := class.Namespace
	blueprint := &scope.ClusterBlueprint{
		Topology:           cluster.Spec.Topology,
		ClusterClass:       class,
		ControlPlane:       &scope.ControlPlaneBlueprint{},
		MachineDeployments: map[string]*scope.MachineDeploymentBlueprint{},
		MachinePools:       map[string]*scope.MachinePoolBlueprint{},
	}
	var err error
	read := func(what string, ref clusterv1.ClusterClassTemplateReference) *unstructured.Unstructured {
		if err != nil {
			return nil
		}
		var object *unstructured.Unstructured
		object, err = external.Get(ctx, c, ref.ToObjectReference(namespace))
		if err != nil {
			err = fmt.Errorf("reading the %s template %s %s/%s: %w", what, ref.Kind, namespace, ref.Name, err)
		}
		return object
	}
	blueprint.InfrastructureClusterTemplate = read("infrastructure cluster", class.Spec.Infrastructure.TemplateRef)
	blueprint.ControlPlane.Template = read("control plane", class.Spec.ControlPlane.TemplateRef)
	if blueprint.HasControlPlaneInfrastructureMachine() {
		blueprint.ControlPlane.InfrastructureMachineTemplate = read("control plane machine", class.Spec.ControlPlane.MachineInfrastructure.TemplateRef)
	}
	if blueprint.HasControlPlaneMachineHealthCheck() {
		blueprint.ControlPlane.HealthCheck = class.Spec.ControlPlane.HealthCheck
	}
	for _, workers := range class.Spec.Workers.MachineDeployments {
		md := &scope.MachineDeploymentBlueprint{
			InfrastructureMachineTemplate: read("MachineDeployment infrastructure", workers.Infrastructure.TemplateRef),
			BootstrapTemplate:             read("MachineDeployment bootstrap", workers.Bootstrap.TemplateRef),
			HealthCheck:                   workers.HealthCheck,
		}
		workers.Metadata.DeepCopyInto(&md.Metadata)
		blueprint.MachineDeployments[workers.Class] = md
	}
	for _, workers := range class.Spec.Workers.MachinePools {
		mp := &scope.MachinePoolBlueprint{
			InfrastructureMachinePoolTemplate: read("MachinePool infrastructure", workers.Infrastructure.TemplateRef),
			BootstrapTemplate:                 read("MachinePool bootstrap", workers.Bootstrap.TemplateRef),
		}
		workers.Metadata.DeepCopyInto(&mp.Metadata)
		blueprint.MachinePools[workers.Class] = mp
	}
	return blueprint, err
}
