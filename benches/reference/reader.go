package reference

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/index"
)

// cacheReader is what the reference's webhooks read through mgr.GetClient(): an informer cache
// that returns deep copies, with Clusters indexed by their ClusterClass.
type cacheReader struct {
	classes  map[client.ObjectKey]*clusterv1.ClusterClass
	byClass  map[string][]*clusterv1.Cluster
	clusters []*clusterv1.Cluster
}

func newCacheReader(classes []*clusterv1.ClusterClass, clusters []*clusterv1.Cluster) *cacheReader {
	r := &cacheReader{
		classes:  map[client.ObjectKey]*clusterv1.ClusterClass{},
		byClass:  map[string][]*clusterv1.Cluster{},
		clusters: clusters,
	}
	for _, class := range classes {
		r.classes[client.ObjectKeyFromObject(class)] = class
	}
	for _, cluster := range clusters {
		for _, key := range index.ClusterByClusterClassRef(cluster) {
			r.byClass[key] = append(r.byClass[key], cluster)
		}
	}
	return r
}

// Get returns a copy of a stored ClusterClass; every other kind is not found.
func (r *cacheReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if class, ok := obj.(*clusterv1.ClusterClass); ok {
		if stored, found := r.classes[key]; found {
			stored.DeepCopyInto(class)
			return nil
		}
	}
	return apierrors.NewNotFound(clusterv1.GroupVersion.WithResource("unknown").GroupResource(), key.Name)
}

// List returns copies of the Clusters (of one ClusterClass when the index field is selected);
// lists of every other kind are empty.
func (r *cacheReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	clusters, ok := list.(*clusterv1.ClusterList)
	if !ok {
		return nil
	}
	options := (&client.ListOptions{}).ApplyOptions(opts)
	selected := r.clusters
	if options.FieldSelector != nil {
		if key, exact := options.FieldSelector.RequiresExactMatch(index.ClusterClassRefPath); exact {
			selected = r.byClass[key]
		}
	}
	clusters.Items = make([]clusterv1.Cluster, len(selected))
	for i, cluster := range selected {
		cluster.DeepCopyInto(&clusters.Items[i])
	}
	return nil
}
