// Package controller holds no code: its subpackages are the operator's controllers, one job
// each, wired in pkg/operator. Where a controller carries out a decision made without clients,
// the two share a name: pkg/controller/clusteroperator writes the ClusterOperator status that
// pkg/clusteroperator computes, pkg/controller/configstatus writes the Config status that
// pkg/configstatus computes, pkg/controller/imports records and retries the imports that
// pkg/imports judges, and pkg/controller/access keeps the verdict that pkg/access reaches. The
// deciding packages are listed in hack/pure-packages, and layout_test.go keeps clients out of them.
package controller
