package faults

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// kindAPI is what differs between workload kinds: how to read and write one object of the kind and
// where its pod template, selector, generation and rollout status are. A kind's file fills one in.
type kindAPI[T any] struct {
	kind       string
	get        func(ctx context.Context, ns, name string) (T, error)
	update     func(ctx context.Context, obj T) (T, error)
	template   func(obj T) *corev1.PodTemplateSpec
	selector   func(obj T) *metav1.LabelSelector
	generation func(obj T) int64
	progress   func(obj T) (Progress, error)
}

// typedWorkload is a Workload of one kind, named.
type typedWorkload[T any] struct {
	api      kindAPI[T]
	ns, name string
}

func (w typedWorkload[T]) Kind() string { return w.api.kind }
func (w typedWorkload[T]) Name() string { return w.name }

func (w typedWorkload[T]) what() string {
	return fmt.Sprintf("%s %s/%s", strings.ToLower(w.api.kind), w.ns, w.name)
}

func (w typedWorkload[T]) UpdateTemplate(ctx context.Context, change func(*corev1.PodTemplateSpec) error) (int64, error) {
	var gen int64
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := w.api.get(ctx, w.ns, w.name)
		if err != nil {
			return err
		}
		if err := change(w.api.template(obj)); err != nil {
			return err
		}
		obj, err = w.api.update(ctx, obj)
		if err == nil {
			gen = w.api.generation(obj)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("update %s: %w", w.what(), err)
	}
	return gen, nil
}

func (w typedWorkload[T]) Selector(ctx context.Context) (string, error) {
	obj, err := w.api.get(ctx, w.ns, w.name)
	if err != nil {
		return "", fmt.Errorf("get %s: %w", w.what(), err)
	}
	return selectorString(w.api.kind, w.name, w.api.selector(obj))
}

func (w typedWorkload[T]) Progress(ctx context.Context) (Progress, error) {
	obj, err := w.api.get(ctx, w.ns, w.name)
	if err != nil {
		return Progress{}, fmt.Errorf("get %s: %w", w.what(), err)
	}
	p, err := w.api.progress(obj)
	if err != nil {
		return p, fmt.Errorf("%s: %w", w.what(), err)
	}
	return p, nil
}
