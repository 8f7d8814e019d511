package reference

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
)

// Objects are the ClusterClasses and Clusters of a set of manifests: what the reference's
// webhooks read through the cache (templates and every other kind are never read by them).
type Objects struct {
	Classes  []*clusterv1.ClusterClass
	Clusters []*clusterv1.Cluster
}

// Documents splits a multi-document YAML (or JSON) manifest into one JSON object per document,
// empty documents and comment-only documents dropped.
func Documents(text []byte) ([][]byte, error) {
	var documents [][]byte
	for i, document := range splitDocuments(text) {
		object, err := yaml.YAMLToJSON(document)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if !bytes.Equal(object, []byte("null")) {
			documents = append(documents, object)
		}
	}
	return documents, nil
}

// splitDocuments cuts a YAML stream at its `---` separator lines.
func splitDocuments(text []byte) [][]byte {
	var documents [][]byte
	var current []byte
	for _, line := range bytes.SplitAfter(text, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("---")) && len(bytes.TrimSpace(line[3:])) == 0 {
			documents = append(documents, current)
			current = nil
			continue
		}
		current = append(current, line...)
	}
	return append(documents, current)
}

// LoadObjects reads the manifests (.yaml, .yml, .json) directly in dir, in name order, as
// `capi-topology serve --objects DIR` does, and keeps the ClusterClasses and Clusters. Each
// ClusterClass is marked reconciled (see MarkReconciled), since no controller runs here.
func LoadObjects(dir string) (*Objects, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	objects := &Objects{}
	for _, entry := range entries {
		extension := strings.TrimPrefix(filepath.Ext(entry.Name()), ".")
		if entry.IsDir() || (extension != "yaml" && extension != "yml" && extension != "json") {
			continue
		}
		path := filepath.Join(dir, entry.Name())
		if err := objects.add(path); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return objects, nil
}

// add decodes the ClusterClasses and Clusters of one manifest file.
func (o *Objects) add(path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	documents, err := Documents(text)
	if err != nil {
		return err
	}
	for _, document := range documents {
		// A v1beta1 manifest is read as the API server stores it: converted to v1beta2.
		if document, err = Hub(document); err != nil {
			return err
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(document, &meta); err != nil {
			return err
		}
		if meta.APIVersion != clusterv1.GroupVersion.String() {
			continue
		}
		switch meta.Kind {
		case "ClusterClass":
			class, err := Decode[clusterv1.ClusterClass](document)
			if err != nil {
				return err
			}
			if err := MarkReconciled(class); err != nil {
				return err
			}
			o.Classes = append(o.Classes, class)
		case "Cluster":
			cluster, err := Decode[clusterv1.Cluster](document)
			if err != nil {
				return err
			}
			o.Clusters = append(o.Clusters, cluster)
		}
	}
	return nil
}

// MarkReconciled gives a ClusterClass the status its reconciler writes before the reference's
// Cluster webhook uses the class (without it the webhook waits two seconds and then skips
// defaulting and validating the variables): the inline variables' definitions, sorted by name,
// the observed generation and VariablesReconciled true. A class that already says it is
// reconciled is left as written. Variables discovered from a Runtime Extension need the
// extension, so a class with such a patch is an error.
func MarkReconciled(class *clusterv1.ClusterClass) error {
	if conditions.IsTrue(class, clusterv1.ClusterClassVariablesReadyCondition) &&
		class.Status.ObservedGeneration == class.Generation {
		return nil
	}
	for _, patch := range class.Spec.Patches {
		if patch.External != nil && patch.External.DiscoverVariablesExtension != "" {
			return fmt.Errorf("ClusterClass %s/%s: patch %q discovers variables from a Runtime Extension, which this harness does not call",
				class.Namespace, class.Name, patch.Name)
		}
	}
	variables := make([]clusterv1.ClusterClassStatusVariable, 0, len(class.Spec.Variables))
	for _, variable := range class.Spec.Variables {
		variables = append(variables, clusterv1.ClusterClassStatusVariable{
			Name: variable.Name,
			Definitions: []clusterv1.ClusterClassStatusVariableDefinition{{
				From:                      clusterv1.VariableDefinitionFromInline,
				Required:                  variable.Required,
				DeprecatedV1Beta1Metadata: variable.DeprecatedV1Beta1Metadata,
				Schema:                    variable.Schema,
			}},
		})
	}
	sort.SliceStable(variables, func(i, j int) bool { return variables[i].Name < variables[j].Name })
	class.Status.Variables = variables
	class.Status.ObservedGeneration = class.Generation
	conditions.Set(class, metav1.Condition{
		Type:               clusterv1.ClusterClassVariablesReadyCondition,
		Status:             metav1.ConditionTrue,
		Reason:             clusterv1.ClusterClassVariablesReadyReason,
		ObservedGeneration: class.Generation,
	})
	return nil
}

// MirrorV1Beta1Reconciled gives a ClusterClass converted from v1beta1 the VariablesReady
// condition that its v1beta1 VariablesReconciled condition stands for (the v1.14 ClusterClass
// controller writes both; conversion moves the v1beta1 one to status.deprecated.v1beta1), so a
// v1beta1 fixture's class reads as reconciled, or not, as the fixture wrote it.
func MirrorV1Beta1Reconciled(class *clusterv1.ClusterClass) {
	if conditions.Has(class, clusterv1.ClusterClassVariablesReadyCondition) {
		return
	}
	for _, old := range class.GetV1Beta1Conditions() {
		if old.Type != "VariablesReconciled" {
			continue
		}
		reason := old.Reason
		if reason == "" {
			reason = clusterv1.ClusterClassVariablesReadyReason
		}
		conditions.Set(class, metav1.Condition{
			Type:               clusterv1.ClusterClassVariablesReadyCondition,
			Status:             metav1.ConditionStatus(old.Status),
			Reason:             reason,
			Message:            old.Message,
			ObservedGeneration: class.Status.ObservedGeneration,
			LastTransitionTime: old.LastTransitionTime,
		})
	}
}
