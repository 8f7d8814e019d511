// Package reference runs the benchmark workloads of benches/admission.rs through Cluster API
// v1.10.10's own webhook handlers, so the two implementations are measured on the same inputs.
//
// The handlers are the ones the reference's manager serves: the exported
// sigs.k8s.io/cluster-api/webhooks types register them on a webhook server, and the benchmarks
// send AdmissionReview bytes to that server's mux and read the AdmissionReview bytes it writes.
// Objects are read from an in-memory reader that hands out deep copies, as controller-runtime's
// informer cache does (the fake client would add a JSON round trip per read that the real
// webhook does not pay).
//
// cmd/serve serves the same handlers over HTTPS, reading ClusterClasses and Clusters from a
// directory of manifests (LoadObjects, shared with the tests), for benches/compare-tls.sh.
package reference
