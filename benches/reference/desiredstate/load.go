package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/contract"

	reference "capi-topology/benches/reference"
)

// loaded is one fixture directory: a fake API server holding its objects (ClusterClasses marked
// reconciled, templates, the CRDs of the provider kinds) and its Clusters, as written.
type loaded struct {
	client   client.Client
	clusters []*clusterv1.Cluster
}

// load reads the manifests of a fixture (see manifests). Cluster API's own kinds are converted to v1beta2 by
// Cluster API's converters (as the API server stores them); every other object is kept as
// written, and gets a CRD whose contract label names the version it is written at (a v1beta1
// template is a v1beta1-contract object, as `plan` reads it without CRDs).
func load(fixture string) (*loaded, error) {
	documents, err := manifests(fixture)
	if err != nil {
		return nil, err
	}
	scheme, err := reference.Scheme()
	if err != nil {
		return nil, err
	}
	result := &loaded{}
	var objects []client.Object
	versions := map[schema.GroupKind]map[string]bool{}
	for _, document := range documents {
		if document, err = reference.Hub(document); err != nil {
			return nil, err
		}
		object := &unstructured.Unstructured{}
		if err := json.Unmarshal(document, &object.Object); err != nil {
			return nil, err
		}
		// Applied with kubectl, an object without a namespace lands in `default`.
		if object.GetNamespace() == "" {
			object.SetNamespace("default")
			if document, err = json.Marshal(object.Object); err != nil {
				return nil, err
			}
		}
		gvk := object.GroupVersionKind()
		switch {
		case gvk == clusterv1.GroupVersion.WithKind("ClusterClass"):
			class, err := reference.Decode[clusterv1.ClusterClass](document)
			if err != nil {
				return nil, err
			}
			if err := reference.MarkReconciled(class); err != nil {
				return nil, err
			}
			objects = append(objects, class)
		case gvk == clusterv1.GroupVersion.WithKind("Cluster"):
			cluster, err := reference.Decode[clusterv1.Cluster](document)
			if err != nil {
				return nil, err
			}
			if cluster.Spec.Topology.IsDefined() {
				result.clusters = append(result.clusters, cluster)
			}
		case gvk.Group == clusterv1.GroupVersion.Group || gvk.Group == "":
			// Other core kinds (current objects) and core/v1 objects are not read here.
		default:
			if !scheme.Recognizes(gvk) {
				scheme.AddKnownTypeWithName(gvk, &unstructured.Unstructured{})
				scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &unstructured.UnstructuredList{})
			}
			if versions[gvk.GroupKind()] == nil {
				versions[gvk.GroupKind()] = map[string]bool{}
			}
			versions[gvk.GroupKind()][gvk.Version] = true
			objects = append(objects, object)
		}
	}
	objects = append(objects, contractCRDs(versions)...)
	result.client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
	sort.SliceStable(result.clusters, func(i, j int) bool {
		return result.clusters[i].Namespace+"/"+result.clusters[i].Name < result.clusters[j].Namespace+"/"+result.clusters[j].Name
	})
	return result, nil
}

// manifests are the YAML or JSON documents of a fixture: `fixture` is a directory (its .yaml,
// .yml and .json files, in name order) or a comma-separated list of files.
func manifests(fixture string) ([][]byte, error) {
	files := strings.Split(fixture, ",")
	if info, err := os.Stat(fixture); err == nil && info.IsDir() {
		entries, err := os.ReadDir(fixture)
		if err != nil {
			return nil, err
		}
		files = nil
		for _, entry := range entries {
			extension := strings.TrimPrefix(filepath.Ext(entry.Name()), ".")
			if !entry.IsDir() && (extension == "yaml" || extension == "yml" || extension == "json") {
				files = append(files, filepath.Join(fixture, entry.Name()))
			}
		}
	}
	var documents [][]byte
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		split, err := reference.Documents(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		documents = append(documents, split...)
	}
	return documents, nil
}

// contractCRDs are CRDs for the provider kinds, labelled `cluster.x-k8s.io/<version>: <version>`
// for each version the fixture writes a kind at (the label Cluster API reads to learn a kind's
// contract and the apiVersion of a v1beta2 reference). A template's CRD also labels the object
// kind it makes (the kind without `Template`), which the control plane's contract is read from.
func contractCRDs(versions map[schema.GroupKind]map[string]bool) []client.Object {
	labels := map[schema.GroupKind]map[string]string{}
	for gk, set := range versions {
		for _, made := range []schema.GroupKind{gk, {Group: gk.Group, Kind: strings.TrimSuffix(gk.Kind, "Template")}} {
			if labels[made] == nil {
				labels[made] = map[string]string{}
			}
			for version := range set {
				labels[made][clusterv1.GroupVersion.Group+"/"+version] = version
			}
		}
	}
	crds := make([]client.Object, 0, len(labels))
	for gk, set := range labels {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		crd.Name = contract.CalculateCRDName(gk.Group, gk.Kind)
		crd.Labels = set
		crds = append(crds, crd)
	}
	return crds
}
