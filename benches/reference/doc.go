// Package reference runs Cluster API v1.14.0's own webhook handlers in process, beside
// capi-topology: the benchmark workloads of benches/admission.rs (reference_test.go, run by
// benches/compare.sh), and the admission fixtures of tests/fixtures/admission, one (TestProbe,
// PROBE=<fixture>) or all of them (TestSweep, SWEEP=1), sent as the API server sends them and
// compared with each fixture's expect. README.md says how to run them, what the sweep compares,
// its latest summary, and the fixtures it does not count (the "Not applicable" table it reads).
//
// The handlers are the ones the reference's manager serves: the exported
// sigs.k8s.io/cluster-api/core/webhooks/admission types register them, with their conversion
// webhook at /convert, on a webhook server. They decide on v1beta2 (matchPolicy Equivalent), so
// a v1beta1 object is first converted by Cluster API's own converters (Hub), as the API server
// converts it. Requests are AdmissionReview bytes sent to that server's mux, answered with the
// AdmissionReview bytes it writes. For the benchmarks, objects are read from an in-memory reader that hands out deep
// copies, as controller-runtime's informer cache does (the fake client would add a JSON round
// trip per read that the real webhook does not pay); the probe and the sweep read the fixtures'
// objects through the fake client.
//
// cmd/serve serves the same handlers over HTTPS, reading ClusterClasses and Clusters from a
// directory of manifests (LoadObjects, shared with the tests), for benches/compare-tls.sh.
package reference
