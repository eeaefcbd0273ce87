package bundle

import (
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The part of OLM's ClusterServiceVersion (operators.coreos.com/v1alpha1) that the bundle
// fills in. The field names follow OLM's API; the tests decode the generated CSV strictly
// with github.com/operator-framework/api, so a misspelt field fails there.

type clusterServiceVersion struct {
	metav1.TypeMeta `json:",inline"`
	Metadata        metav1.ObjectMeta `json:"metadata"`
	Spec            csvSpec           `json:"spec"`
}

type csvSpec struct {
	DisplayName               string               `json:"displayName"`
	Description               string               `json:"description"`
	Version                   string               `json:"version"`
	Keywords                  []string             `json:"keywords,omitempty"`
	Provider                  appLink              `json:"provider"`
	Icon                      []icon               `json:"icon,omitempty"`
	Links                     []appLink            `json:"links,omitempty"`
	Maturity                  string               `json:"maturity,omitempty"`
	MinKubeVersion            string               `json:"minKubeVersion,omitempty"`
	InstallModes              []installMode        `json:"installModes"`
	CustomResourceDefinitions crdDescriptions      `json:"customresourcedefinitions"`
	Install                   namedInstallStrategy `json:"install"`
	RelatedImages             []relatedImage       `json:"relatedImages"`
}

type appLink struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

type icon struct {
	Data      string `json:"base64data"`
	MediaType string `json:"mediatype"`
}

type installMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

type crdDescriptions struct {
	Owned []crdDescription `json:"owned"`
}

type crdDescription struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Kind        string `json:"kind"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
}

type namedInstallStrategy struct {
	StrategyName string                    `json:"strategy"`
	StrategySpec strategyDetailsDeployment `json:"spec"`
}

type strategyDetailsDeployment struct {
	DeploymentSpecs    []strategyDeploymentSpec        `json:"deployments"`
	Permissions        []strategyDeploymentPermissions `json:"permissions,omitempty"`
	ClusterPermissions []strategyDeploymentPermissions `json:"clusterPermissions,omitempty"`
}

type strategyDeploymentSpec struct {
	Name  string                `json:"name"`
	Spec  appsv1.DeploymentSpec `json:"spec"`
	Label map[string]string     `json:"label,omitempty"`
}

type strategyDeploymentPermissions struct {
	ServiceAccountName string              `json:"serviceAccountName"`
	Rules              []rbacv1.PolicyRule `json:"rules"`
}

type relatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}
