package observers

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/probegate/probegate/internal/timeline"
)

// errWatchGap is returned to the reflector instead of resuming a watch that ended, so that it lists
// again and the informer reconciles what changed during the gap.
var errWatchGap = errors.New("watch ended: relisting to recover the gap")

// stampKey is the annotation the transform writes on every object it receives: the receive offset
// in nanoseconds from the timeline's start, followed by " relist" when the object came from a relist
// after a gap. It lives only in the informer's private cache.
const stampKey = "probegate.io/received"

// gapListWatch wraps a resource's list and watch calls. It refuses to resume a watch after one has
// ended (forcing a relist), knows when a relist's results are being applied, and stamps objects.
type gapListWatch struct {
	name  string
	tl    *timeline.Timeline
	list  func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch func(context.Context, metav1.ListOptions) (watch.Interface, error)

	mu        sync.Mutex
	listed    bool // the initial list was applied (a watch has started since)
	watching  bool // a watch was started since the last list
	relisting bool // a list after a gap is being applied
	gapMarked bool // the current gap has its "watch-gap" mark
	relists   int

	watchStart   time.Time     // when the current watch was opened
	watchTimeout time.Duration // the server-side timeout it asked for (0: none)
}

// List implements cache.Lister.
func (l *gapListWatch) List(options metav1.ListOptions) (runtime.Object, error) {
	return l.ListWithContext(context.Background(), options)
}

// Watch implements cache.Watcher.
func (l *gapListWatch) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return l.WatchWithContext(context.Background(), options)
}

// ListWithContext lists; a list after the initial one starts a relist period.
func (l *gapListWatch) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	l.mu.Lock()
	mark := false
	if options.Continue == "" {
		l.watching = false
		if l.listed && !l.relisting {
			l.relisting = true
			l.relists++
			mark, l.gapMarked = !l.gapMarked, true
		}
	}
	l.mu.Unlock()
	if mark {
		l.markGap()
	}
	return l.list(ctx, options)
}

// WatchWithContext starts a watch, or refuses when the previous watch ended early (broken
// connection, apiserver restart, error) without a list since: the reflector then lists again. A
// watch that ran to its requested timeout is resumed normally.
func (l *gapListWatch) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	if l.watching && l.watchTimeout > 0 && time.Since(l.watchStart) >= l.watchTimeout-time.Second {
		// The previous watch ran to its own timeout: the server closed it cleanly and resuming from
		// the last resource version loses nothing.
		l.watching = false
	}
	if l.watching {
		l.watching = false
		mark := !l.gapMarked
		l.gapMarked = true
		l.mu.Unlock()
		if mark {
			l.markGap()
		}
		return nil, errWatchGap
	}
	l.watching, l.listed, l.relisting, l.gapMarked = true, true, false, false
	l.watchStart, l.watchTimeout = time.Now(), 0
	if options.TimeoutSeconds != nil {
		l.watchTimeout = time.Duration(*options.TimeoutSeconds) * time.Second
	}
	l.mu.Unlock()
	return l.watch(ctx, options)
}

// markGap records on the timeline that this resource's watch ended and a relist follows.
func (l *gapListWatch) markGap() {
	l.tl.Append(timeline.Entry{Kind: timeline.KindMark, Mark: &timeline.Mark{Name: timeline.MarkWatchGap, Detail: l.name + " watch ended; relisting"}})
}

// IsWatchListSemanticsUnSupported keeps the reflector on plain list + watch (the streaming
// watch-list would bypass the relist detection above).
func (l *gapListWatch) IsWatchListSemanticsUnSupported() bool { return true }

func (l *gapListWatch) relistCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.relists
}

// stamp is the informer transform: it records the receive time (and whether a relist delivered the
// object) before the object is queued, and drops managed fields to keep the cache small.
func (l *gapListWatch) stamp(obj any) (any, error) {
	t := l.tl.Since(time.Now())
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj, nil
	}
	l.mu.Lock()
	relist := l.relisting
	l.mu.Unlock()
	v := strconv.FormatInt(int64(t), 10)
	if relist {
		v += " relist"
	}
	old := m.GetAnnotations()
	ann := make(map[string]string, len(old)+1)
	for k, x := range old {
		ann[k] = x
	}
	ann[stampKey] = v
	m.SetAnnotations(ann)
	m.SetManagedFields(nil)
	return obj, nil
}

// stamp is when and how an object reached the observer.
type stamp struct {
	at        time.Time
	t         time.Duration
	recovered bool
}

// stampOf reads the receive stamp of obj; objects without one (tombstones) are stamped now and
// count as recovered, since only a relist produces them.
func (o *Observer) stampOf(obj any) stamp {
	if m, err := meta.Accessor(obj); err == nil {
		if v, ok := m.GetAnnotations()[stampKey]; ok {
			num, rest, _ := strings.Cut(v, " ")
			if n, err := strconv.ParseInt(num, 10, 64); err == nil {
				t := time.Duration(n)
				return stamp{at: o.tl.Start().Add(t), t: t, recovered: rest == "relist"}
			}
		}
	}
	now, t := o.tl.Now()
	return stamp{at: now, t: t, recovered: true}
}

// unwrap returns the object inside a deletion tombstone and whether it was one.
func unwrap(obj any) (any, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return d.Obj, true
	}
	return obj, false
}

func newWatched(o *Observer, name string, example runtime.Object,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) *watched {
	lw := &gapListWatch{name: name, tl: o.tl, list: list, watch: watchFn}
	inf := cache.NewSharedIndexInformerWithOptions(lw, example, cache.SharedIndexInformerOptions{ObjectDescription: name})
	return &watched{name: name, lw: lw, informer: inf}
}

func podInformer(o *Observer, c kubernetes.Interface) *watched {
	pods := c.CoreV1().Pods(o.opts.Namespace)
	sel := func(opts *metav1.ListOptions) { opts.LabelSelector = o.opts.PodSelector }
	return newWatched(o, "pods", &corev1.Pod{},
		func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			sel(&opts)
			return pods.List(ctx, opts)
		},
		func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			sel(&opts)
			return pods.Watch(ctx, opts)
		})
}

// serviceNameLabel is the label the EndpointSlice controller puts on a Service's slices.
const serviceNameLabel = discoveryv1.LabelServiceName

func endpointSliceInformer(o *Observer, c kubernetes.Interface) *watched {
	slices := c.DiscoveryV1().EndpointSlices(o.opts.Namespace)
	sel := func(opts *metav1.ListOptions) { opts.LabelSelector = serviceNameLabel + "=" + o.opts.Service }
	return newWatched(o, "endpointslices", &discoveryv1.EndpointSlice{},
		func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			sel(&opts)
			return slices.List(ctx, opts)
		},
		func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			sel(&opts)
			return slices.Watch(ctx, opts)
		})
}

func eventInformer(o *Observer, c kubernetes.Interface) *watched {
	events := c.CoreV1().Events(o.opts.Namespace)
	return newWatched(o, "events", &corev1.Event{},
		func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return events.List(ctx, opts)
		},
		func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return events.Watch(ctx, opts)
		})
}

func deploymentInformer(o *Observer, c kubernetes.Interface) *watched {
	deps := c.AppsV1().Deployments(o.opts.Namespace)
	sel := func(opts *metav1.ListOptions) {
		if o.opts.Deployment != "" {
			opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.opts.Deployment).String()
		}
	}
	return newWatched(o, "deployments", &appsv1.Deployment{},
		func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			sel(&opts)
			return deps.List(ctx, opts)
		},
		func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			sel(&opts)
			return deps.Watch(ctx, opts)
		})
}
