// Package convert writes golden conversions made by Cluster API v1.14.0's own converters, for
// src/api/convert's tests: `GOLDEN=1 go test ./...` in this directory rewrites
// ../../../src/api/convert/testdata/golden/*.json from the spoke fixtures beside them.
package convert

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	addonsv1beta1 "sigs.k8s.io/cluster-api/api/addons/v1beta1"
	addonsv1 "sigs.k8s.io/cluster-api/api/addons/v1beta2"
	clusterv1beta1 "sigs.k8s.io/cluster-api/api/core/v1beta1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	runtimev1alpha1 "sigs.k8s.io/cluster-api/api/runtime/v1alpha1"
	runtimev1 "sigs.k8s.io/cluster-api/api/runtime/v1beta2"
	"sigs.k8s.io/cluster-api/core/webhooks/conversion"
)

const testdata = "../../../src/api/convert/testdata"

// The contract versions the Rust tests' `crds()` answer with.
var versions = map[schema.GroupKind]string{
	{Group: "infrastructure.cluster.x-k8s.io", Kind: "DockerCluster"}:         "v1beta2",
	{Group: "controlplane.cluster.x-k8s.io", Kind: "KubeadmControlPlane"}:     "v1beta2",
	{Group: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachineTemplate"}: "v1beta2",
	{Group: "infrastructure.cluster.x-k8s.io", Kind: "DockerMachinePool"}:     "v1beta2",
	{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfigTemplate"}:      "v1beta2",
	{Group: "bootstrap.cluster.x-k8s.io", Kind: "KubeadmConfig"}:              "v1beta2",
}

func write(t *testing.T, name string, obj any) {
	t.Helper()
	data, err := json.MarshalIndent(obj, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(testdata, "golden", name), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatal(err)
	}
}

func TestGolden(t *testing.T) {
	if os.Getenv("GOLDEN") == "" {
		t.Skip("set GOLDEN=1 to rewrite the golden files")
	}
	conversion.SetAPIVersionGetter(func(_ context.Context, gk schema.GroupKind) (string, error) {
		v, ok := versions[gk]
		if !ok {
			return "", fmt.Errorf("no CRD for %v", gk)
		}
		return gk.Group + "/" + v, nil
	})
	ctx := context.Background()
	if err := os.MkdirAll(filepath.Join(testdata, "golden"), 0o755); err != nil {
		t.Fatal(err)
	}

	spoke := &clusterv1beta1.Cluster{}
	read(t, "cluster.v1beta1.yaml", spoke)
	hub := &clusterv1.Cluster{}
	if err := conversion.ConvertClusterV1Beta1ToHub(ctx, spoke, hub); err != nil {
		t.Fatal(err)
	}
	hub.APIVersion, hub.Kind = clusterv1.GroupVersion.String(), "Cluster"
	write(t, "cluster.v1beta1-to-hub.json", hub)
	back := &clusterv1beta1.Cluster{}
	if err := conversion.ConvertClusterHubToV1Beta1(ctx, hub.DeepCopy(), back); err != nil {
		t.Fatal(err)
	}
	back.APIVersion, back.Kind = clusterv1beta1.GroupVersion.String(), "Cluster"
	write(t, "cluster.hub-to-v1beta1.json", back)

	classSpoke := &clusterv1beta1.ClusterClass{}
	read(t, "clusterclass.v1beta1.yaml", classSpoke)
	classHub := &clusterv1.ClusterClass{}
	if err := conversion.ConvertClusterClassV1Beta1ToHub(ctx, classSpoke, classHub); err != nil {
		t.Fatal(err)
	}
	classHub.APIVersion, classHub.Kind = clusterv1.GroupVersion.String(), "ClusterClass"
	write(t, "clusterclass.v1beta1-to-hub.json", classHub)
	classBack := &clusterv1beta1.ClusterClass{}
	if err := conversion.ConvertClusterClassHubToV1Beta1(ctx, classHub.DeepCopy(), classBack); err != nil {
		t.Fatal(err)
	}
	classBack.APIVersion, classBack.Kind = clusterv1beta1.GroupVersion.String(), "ClusterClass"
	write(t, "clusterclass.hub-to-v1beta1.json", classBack)

	crs := &addonsv1beta1.ClusterResourceSet{}
	read(t, "clusterresourceset.spoke.yaml", crs)
	crsHub := &addonsv1.ClusterResourceSet{}
	if err := conversion.ConvertClusterResourceSetV1Beta1ToHub(ctx, crs, crsHub); err != nil {
		t.Fatal(err)
	}
	crsHub.APIVersion, crsHub.Kind = addonsv1.GroupVersion.String(), "ClusterResourceSet"
	write(t, "clusterresourceset.spoke-to-hub.json", crsHub)

	binding := &addonsv1beta1.ClusterResourceSetBinding{}
	read(t, "clusterresourcesetbinding.spoke.yaml", binding)
	bindingHub := &addonsv1.ClusterResourceSetBinding{}
	if err := conversion.ConvertClusterResourceSetBindingV1Beta1ToHub(ctx, binding, bindingHub); err != nil {
		t.Fatal(err)
	}
	bindingHub.APIVersion, bindingHub.Kind = addonsv1.GroupVersion.String(), "ClusterResourceSetBinding"
	write(t, "clusterresourcesetbinding.spoke-to-hub.json", bindingHub)

	ext := &runtimev1alpha1.ExtensionConfig{}
	read(t, "extensionconfig.spoke.yaml", ext)
	extHub := &runtimev1.ExtensionConfig{}
	if err := conversion.ConvertExtensionConfigV1Alpha1ToHub(ctx, ext, extHub); err != nil {
		t.Fatal(err)
	}
	extHub.APIVersion, extHub.Kind = runtimev1.GroupVersion.String(), "ExtensionConfig"
	write(t, "extensionconfig.spoke-to-hub.json", extHub)

	mhc := &clusterv1beta1.MachineHealthCheck{}
	read(t, "machinehealthcheck.v1beta1.yaml", mhc)
	mhcHub := &clusterv1.MachineHealthCheck{}
	if err := conversion.ConvertMachineHealthCheckV1Beta1ToHub(ctx, mhc, mhcHub); err != nil {
		t.Fatal(err)
	}
	mhcHub.APIVersion, mhcHub.Kind = clusterv1.GroupVersion.String(), "MachineHealthCheck"
	write(t, "machinehealthcheck.v1beta1-to-hub.json", mhcHub)
	mhcBack := &clusterv1beta1.MachineHealthCheck{}
	if err := conversion.ConvertMachineHealthCheckHubToV1Beta1(ctx, mhcHub.DeepCopy(), mhcBack); err != nil {
		t.Fatal(err)
	}
	mhcBack.APIVersion, mhcBack.Kind = clusterv1beta1.GroupVersion.String(), "MachineHealthCheck"
	write(t, "machinehealthcheck.hub-to-v1beta1.json", mhcBack)

	mdSpoke := &clusterv1beta1.MachineDeployment{}
	read(t, "machinedeployment.v1beta1.yaml", mdSpoke)
	mdHub := &clusterv1.MachineDeployment{}
	if err := conversion.ConvertMachineDeploymentV1Beta1ToHub(ctx, mdSpoke, mdHub); err != nil {
		t.Fatal(err)
	}
	mdHub.APIVersion, mdHub.Kind = clusterv1.GroupVersion.String(), "MachineDeployment"
	write(t, "machinedeployment.v1beta1-to-hub.json", mdHub)
	mdBack := &clusterv1beta1.MachineDeployment{}
	if err := conversion.ConvertMachineDeploymentHubToV1Beta1(ctx, mdHub.DeepCopy(), mdBack); err != nil {
		t.Fatal(err)
	}
	mdBack.APIVersion, mdBack.Kind = clusterv1beta1.GroupVersion.String(), "MachineDeployment"
	write(t, "machinedeployment.hub-to-v1beta1.json", mdBack)

	msSpoke := &clusterv1beta1.MachineSet{}
	read(t, "machineset.v1beta1.yaml", msSpoke)
	msHub := &clusterv1.MachineSet{}
	if err := conversion.ConvertMachineSetV1Beta1ToHub(ctx, msSpoke, msHub); err != nil {
		t.Fatal(err)
	}
	msHub.APIVersion, msHub.Kind = clusterv1.GroupVersion.String(), "MachineSet"
	write(t, "machineset.v1beta1-to-hub.json", msHub)
	msBack := &clusterv1beta1.MachineSet{}
	if err := conversion.ConvertMachineSetHubToV1Beta1(ctx, msHub.DeepCopy(), msBack); err != nil {
		t.Fatal(err)
	}
	msBack.APIVersion, msBack.Kind = clusterv1beta1.GroupVersion.String(), "MachineSet"
	write(t, "machineset.hub-to-v1beta1.json", msBack)

	mpSpoke := &clusterv1beta1.MachinePool{}
	read(t, "machinepool.v1beta1.yaml", mpSpoke)
	mpHub := &clusterv1.MachinePool{}
	if err := conversion.ConvertMachinePoolV1Beta1ToHub(ctx, mpSpoke, mpHub); err != nil {
		t.Fatal(err)
	}
	mpHub.APIVersion, mpHub.Kind = clusterv1.GroupVersion.String(), "MachinePool"
	write(t, "machinepool.v1beta1-to-hub.json", mpHub)
	mpBack := &clusterv1beta1.MachinePool{}
	if err := conversion.ConvertMachinePoolHubToV1Beta1(ctx, mpHub.DeepCopy(), mpBack); err != nil {
		t.Fatal(err)
	}
	mpBack.APIVersion, mpBack.Kind = clusterv1beta1.GroupVersion.String(), "MachinePool"
	write(t, "machinepool.hub-to-v1beta1.json", mpBack)
}
