// Package controller holds no code: its subpackages are the operator's controllers, one job
// each, wired in pkg/operator. A controller that carries out a decision made without clients is
// named after it, with "control": pkg/controller/clusteroperatorcontrol writes the ClusterOperator
// status that pkg/clusteroperator computes, configstatuscontrol the Config status that
// pkg/configstatus computes, importscontrol records and retries the imports that pkg/imports
// judges, and accesscontrol keeps the verdict that pkg/access reaches. No two packages share a
// name (make verify), so neither side of a pair is ever imported under an alias. The deciding
// packages are listed in hack/pure-packages, and layout_test.go keeps clients out of them.
package controller
