package attach

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/brick-storage/brick/rollback"
)

// fakeTargets is an Ironic volume target registry in memory.
type fakeTargets struct {
	mu      sync.Mutex
	n       int
	targets map[string]fakeTarget // by UUID
}

type fakeTarget struct{ node, volumeID, tag string }

func (f *fakeTargets) CreateTarget(_ context.Context, node, volumeID, _ string, _ int, _ map[string]any, tag string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	uuid := fmt.Sprintf("00000000-0000-0000-0000-%012d", f.n)
	if f.targets == nil {
		f.targets = map[string]fakeTarget{}
	}
	f.targets[uuid] = fakeTarget{node, volumeID, tag}
	return uuid, nil
}

func (f *fakeTargets) FindTarget(_ context.Context, node, volumeID, tag string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for uuid, t := range f.targets {
		if t == (fakeTarget{node, volumeID, tag}) {
			return uuid, nil
		}
	}
	return "", nil
}

func (f *fakeTargets) DeleteTarget(_ context.Context, _ string, uuid string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.targets, uuid)
	return nil
}

func (f *fakeTargets) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.targets)
}

// A kill -9 around Ironic registration, including the moment between
// Ironic creating the target and brick recording its UUID, is undone by
// cleanup: no target is left on the node. Another attach's target of the
// same volume (another tag) is not touched.
func TestCrashAroundRegisterThenCleanup(t *testing.T) {
	for _, step := range []string{StepRegister, StepRegistered, StepDone} {
		t.Run(step, func(t *testing.T) {
			f := newFixture(t, "")
			targets := &fakeTargets{}
			_, err := targets.CreateTarget(context.Background(), "node-1", volID, "iscsi", 0, nil, "someone else's")
			require.NoError(t, err)
			m := f.manager()
			m.Targets = targets
			ctx := rollback.WithTrace(context.Background(), crashAt(step))
			func() {
				defer func() { _, ok := recover().(crash); require.True(t, ok) }()
				_, _ = m.Attach(ctx, AttachOptions{Volume: volID, IronicNode: "node-1", BootIndex: 1})
			}()
			m2 := f.manager()
			m2.Targets = targets
			res, err := m2.Cleanup(context.Background(), volID, false)
			require.NoError(t, err)
			require.Len(t, res, 1)
			if step == StepDone {
				require.Equal(t, "none", res[0].Action, "attached: cleanup leaves it")
				require.Equal(t, 2, targets.count())
				require.NoError(t, m2.Detach(context.Background(), DetachOptions{Volume: volID}))
			} else {
				require.Equal(t, "undone", res[0].Action, res[0])
			}
			require.Equal(t, 1, targets.count(), "only the other target is left")
			f.requireClean()
		})
	}
}

func TestCrashAtUnregisterThenCleanup(t *testing.T) {
	f := newFixture(t, "")
	targets := &fakeTargets{}
	m := f.manager()
	m.Targets = targets
	_, err := m.Attach(context.Background(), AttachOptions{Volume: volID, IronicNode: "node-1"})
	require.NoError(t, err)
	require.Equal(t, 1, targets.count())
	ctx := rollback.WithTrace(context.Background(), crashAt(StepUnregister))
	func() {
		defer func() { _, ok := recover().(crash); require.True(t, ok) }()
		_ = m.Detach(ctx, DetachOptions{Volume: volID})
	}()
	m2 := f.manager()
	m2.Targets = targets
	_, err = m2.Cleanup(context.Background(), "", false)
	require.NoError(t, err)
	require.Zero(t, targets.count())
	f.requireClean()
}
