package observers

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/probegate/probegate/internal/timeline"
)

func testListWatch(tl *timeline.Timeline) (*gapListWatch, *int, *int) {
	lists, watches := 0, 0
	return &gapListWatch{name: "pods", tl: tl,
		list: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			lists++
			return &corev1.PodList{}, nil
		},
		watch: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			watches++
			return watch.NewFake(), nil
		},
	}, &lists, &watches
}

func TestGapListWatchStateMachine(t *testing.T) {
	tl := timeline.New(time.Now())
	lw, lists, watches := testListWatch(tl)
	ctx := context.Background()
	long := int64(300)
	opts := metav1.ListOptions{TimeoutSeconds: &long}

	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, _ := lw.stamp(&corev1.Pod{}); isRelist(s) {
		t.Fatal("initial list stamped as relist")
	}
	if _, err := lw.WatchWithContext(ctx, opts); err != nil {
		t.Fatal(err)
	}
	// The watch broke early: the next watch is refused so the reflector relists.
	if _, err := lw.WatchWithContext(ctx, opts); !errors.Is(err, errWatchGap) {
		t.Fatalf("second watch err = %v, want errWatchGap", err)
	}
	if *watches != 1 {
		t.Fatalf("inner watch called %d times, want 1", *watches)
	}
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, _ := lw.stamp(&corev1.Pod{}); !isRelist(s) {
		t.Fatal("objects of the relist not stamped as relist")
	}
	// Pages of the same list do not start another relist.
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{Continue: "page2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := lw.WatchWithContext(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if s, _ := lw.stamp(&corev1.Pod{}); isRelist(s) {
		t.Fatal("objects after the relist still stamped as relist")
	}
	if lw.relistCount() != 1 || *lists != 3 {
		t.Fatalf("relists = %d, lists = %d; want 1, 3", lw.relistCount(), *lists)
	}
	if marks := tl.Filter(timeline.KindMark); len(marks) != 1 || marks[0].Mark.Name != "watch-gap" {
		t.Fatalf("marks = %+v, want one watch-gap", marks)
	}

	// A watch that ran to its own timeout is resumed without a relist.
	short := int64(1)
	if _, err := lw.WatchWithContext(ctx, metav1.ListOptions{TimeoutSeconds: &short}); !errors.Is(err, errWatchGap) {
		t.Fatalf("watch after an early end: err = %v, want errWatchGap", err)
	}
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := lw.WatchWithContext(ctx, metav1.ListOptions{TimeoutSeconds: &short}); err != nil {
		t.Fatal(err)
	}
	if _, err := lw.WatchWithContext(ctx, metav1.ListOptions{TimeoutSeconds: &short}); err != nil {
		t.Fatalf("watch after a timed-out watch refused: %v", err)
	}
	if lw.relistCount() != 2 {
		t.Fatalf("relists = %d, want 2", lw.relistCount())
	}
	if !lw.IsWatchListSemanticsUnSupported() {
		t.Fatal("watch-list must stay off")
	}
}

func isRelist(obj any) bool {
	p := obj.(*corev1.Pod)
	v := p.Annotations[stampKey]
	return len(v) > 7 && v[len(v)-7:] == " relist"
}

func TestStampKeepsAnnotationsAndDropsManagedFields(t *testing.T) {
	tl := timeline.New(time.Now().Add(-time.Second))
	lw, _, _ := testListWatch(tl)
	in := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}}}
	out, err := lw.stamp(in)
	if err != nil {
		t.Fatal(err)
	}
	p := out.(*corev1.Pod)
	if p.Annotations["a"] != "b" || p.ManagedFields != nil {
		t.Fatalf("stamp mangled the object: %+v", p.ObjectMeta)
	}
	o := &Observer{tl: tl}
	s := o.stampOf(p)
	if s.recovered || s.t < time.Second || s.t > time.Minute || !s.at.Equal(tl.Start().Add(s.t)) {
		t.Fatalf("stampOf = %+v", s)
	}
	if s := o.stampOf(&corev1.Pod{}); !s.recovered {
		t.Fatal("an object without a stamp (tombstone) must count as recovered")
	}
}
