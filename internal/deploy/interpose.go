package deploy

import (
	"encoding/json"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/probegate/probegate/internal/cluster"
)

// A user's dependency gets a real toxiproxy on the app's path to it: the dependency's Service keeps
// its name (the app's configuration is untouched) but selects the toxiproxy pod, whose proxies
// forward to an origin Service selecting the dependency's own pods. Every port of that Service is
// proxied; the declared one under the dependency's name (what faults act on).
const (
	interposeName    = "probegate-toxiproxy"
	interposeAPIName = "probegate-toxiproxy-api"
	originSuffix     = "-origin"
	// firstProxyPort is the toxiproxy container port of the first proxy; each next one adds 1.
	firstProxyPort = 15000
	toxiproxyAPI   = 8474
)

var interposeLabels = map[string]string{"app.kubernetes.io/name": interposeName, "app.kubernetes.io/part-of": "probegate"}

// interposition is what putting toxiproxy in front of an app's dependencies takes.
type interposition struct {
	objects []*metav1.ObjectMeta // of the typed objects below, to set their namespace
	config  *corev1.ConfigMap
	deploy  *appsv1.Deployment
	api     *corev1.Service
	origins []*corev1.Service
	// listen maps "service/port" to the toxiproxy port that replaces it.
	listen  map[string]int32
	proxies map[string]Proxy
}

type proxyConfig struct {
	Name     string `json:"name"`
	Listen   string `json:"listen"`
	Upstream string `json:"upstream"`
	Enabled  bool   `json:"enabled"`
}

// interposeFor plans the toxiproxy in front of app's dependencies.
func interposeFor(app *App, slot int, image string) *interposition {
	ip := &interposition{listen: map[string]int32{}, proxies: map[string]Proxy{}}
	var cfg []proxyConfig
	var ports []corev1.ContainerPort
	next := int32(firstProxyPort)
	done := map[string]bool{}
	for _, d := range app.Dependencies {
		svc := d.Service
		if !done[svc.Name] {
			done[svc.Name] = true
			var ports []corev1.ServicePort
			for _, p := range svc.Spec.Ports {
				p.NodePort = 0
				ports = append(ports, p)
			}
			origin := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: svc.Name + originSuffix, Labels: map[string]string{"app.kubernetes.io/part-of": "probegate"}},
				Spec: corev1.ServiceSpec{Selector: svc.Spec.Selector, Ports: ports,
					PublishNotReadyAddresses: svc.Spec.PublishNotReadyAddresses},
			}
			ip.origins = append(ip.origins, origin)
			ip.objects = append(ip.objects, &origin.ObjectMeta)
		}
		for _, p := range svc.Spec.Ports {
			key := svc.Name + "/" + strconv.Itoa(int(p.Port))
			if _, ok := ip.listen[key]; ok {
				continue
			}
			name := d.Name
			if int(p.Port) != d.Port {
				name = d.Name + "-" + strconv.Itoa(int(p.Port))
			}
			ip.listen[key] = next
			cfg = append(cfg, proxyConfig{Name: name, Listen: fmt.Sprintf("0.0.0.0:%d", next),
				Upstream: fmt.Sprintf("%s:%d", svc.Name+originSuffix, p.Port), Enabled: true})
			ports = append(ports, corev1.ContainerPort{Name: fmt.Sprintf("p%d", next), ContainerPort: next})
			next++
		}
		ip.proxies[d.Name] = Proxy{Name: d.Name, Protocol: d.Protocol}
	}
	data, _ := json.Marshal(cfg)
	ip.config = &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: interposeName, Labels: interposeLabels},
		Data:       map[string]string{"proxies.json": string(data)},
	}
	one := int32(1)
	grace := int64(5)
	ip.deploy = &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: interposeName, Labels: interposeLabels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: interposeLabels},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: interposeLabels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: &grace,
					EnableServiceLinks:            new(bool),
					Containers: []corev1.Container{{
						Name: "toxiproxy", Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
						Args:  []string{"-host", "0.0.0.0", "-config", "/etc/toxiproxy/proxies.json"},
						Ports: append([]corev1.ContainerPort{{Name: "api", ContainerPort: toxiproxyAPI}}, ports...),
						ReadinessProbe: &corev1.Probe{
							ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/version", Port: intstr.FromString("api")}},
							PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: 3,
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/toxiproxy", ReadOnly: true}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
						},
					}},
					Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
						ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: interposeName}}}}},
				},
			},
		},
	}
	ip.api = &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: interposeAPIName, Labels: interposeLabels},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: interposeLabels,
			Ports: []corev1.ServicePort{{Name: "api", Port: toxiproxyAPI, TargetPort: intstr.FromString("api"),
				NodePort: cluster.ToxiproxyNodePort(slot)}},
		},
	}
	ip.objects = append(ip.objects, &ip.config.ObjectMeta, &ip.deploy.ObjectMeta, &ip.api.ObjectMeta)
	return ip
}

// typed lists the interposition's objects in apply order.
func (ip *interposition) typed() []runtime.Object {
	out := []runtime.Object{ip.config}
	for _, o := range ip.origins {
		out = append(out, o)
	}
	return append(out, ip.deploy, ip.api)
}

// repoint returns objs with each dependency Service selecting the toxiproxy pod on its proxy ports.
func (ip *interposition) repoint(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() != "Service" {
			continue
		}
		ports, _, _ := unstructured.NestedSlice(o.Object, "spec", "ports")
		touched := false
		for i, item := range ports {
			p, ok := item.(map[string]any)
			if !ok {
				continue
			}
			port, _, _ := unstructured.NestedInt64(p, "port")
			if l, ok := ip.listen[o.GetName()+"/"+strconv.Itoa(int(port))]; ok {
				p["targetPort"] = int64(l)
				ports[i] = p
				touched = true
			}
		}
		if !touched {
			continue
		}
		_ = unstructured.SetNestedSlice(o.Object, ports, "spec", "ports")
		sel := map[string]any{}
		for k, v := range interposeLabels {
			sel[k] = v
		}
		_ = unstructured.SetNestedMap(o.Object, sel, "spec", "selector")
	}
	return objs
}
