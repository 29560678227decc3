package rollback

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestJournal(t *testing.T) {
	errBoom := errors.New("boom")
	errUndo := errors.New("undo broke")
	tests := []struct {
		name      string
		failAt    string // step whose Do fails
		undoFails map[string]bool
		wantErr   string
		wantUndo  []string // undos run, in order
		wantRbErr string
	}{
		{name: "all done", wantUndo: nil},
		{name: "first fails, its undo runs", failAt: "a", wantErr: "a: boom", wantUndo: []string{"a"}},
		{name: "newest first", failAt: "c", wantErr: "c: boom", wantUndo: []string{"c", "b", "a"}},
		{name: "goes on past failures, first error first", failAt: "c", undoFails: map[string]bool{"c": true, "a": true},
			wantErr: "c: boom", wantUndo: []string{"c", "b", "a"}, wantRbErr: "c: undo broke; a: undo broke"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran []string
			step := func(name string) Step {
				return Step{
					Name: name,
					Do: func(context.Context) error {
						if name == tt.failAt {
							return errBoom
						}
						return nil
					},
					Undo: func(context.Context) error {
						ran = append(ran, name)
						if tt.undoFails[name] {
							return errUndo
						}
						return nil
					},
				}
			}
			var j Journal
			err := j.Run(context.Background(), step("a"), step("b"), step("c"))
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.wantErr)
			require.ErrorIs(t, err, errBoom)
			var se *StepError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tt.failAt, se.Step)
			rbErr := j.Rollback(context.Background())
			require.Equal(t, tt.wantUndo, ran)
			require.Zero(t, j.Len())
			if tt.wantRbErr == "" {
				require.NoError(t, rbErr)
			} else {
				require.EqualError(t, rbErr, tt.wantRbErr)
				require.ErrorIs(t, rbErr, errUndo)
			}
		})
	}
}

func TestBeginFailsTheStep(t *testing.T) {
	did := false
	j := Journal{Begin: func(s string) error {
		if s == "b" {
			return errors.New("disk full")
		}
		return nil
	}}
	err := j.Run(context.Background(),
		Step{Name: "a", Undo: func(context.Context) error { return nil }},
		Step{Name: "b", Do: func(context.Context) error { did = true; return nil }, Undo: func(context.Context) error { return nil }})
	require.EqualError(t, err, "b: disk full")
	require.False(t, did)
	require.Equal(t, 1, j.Len(), "b never started: only a's undo waits")
}

func TestRollbackSurvivesCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	j := Journal{Timeout: time.Minute, Log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	var deadline time.Time
	j.Push("disconnect", func(ctx context.Context) error {
		require.NoError(t, ctx.Err())
		deadline, _ = ctx.Deadline()
		return nil
	})
	require.NoError(t, j.Rollback(ctx))
	require.WithinDuration(t, time.Now().Add(time.Minute), deadline, 5*time.Second)
	require.Contains(t, buf.String(), "step=disconnect")
	require.Contains(t, buf.String(), "duration=")
}

func TestDefaultTimeout(t *testing.T) {
	var j Journal
	var deadline time.Time
	j.Push("x", func(ctx context.Context) error { deadline, _ = ctx.Deadline(); return nil })
	require.NoError(t, j.Rollback(context.Background()))
	require.WithinDuration(t, time.Now().Add(DefaultTimeout), deadline, 5*time.Second)
}

func TestForget(t *testing.T) {
	var j Journal
	j.Push("x", func(context.Context) error { return errors.New("must not run") })
	j.Forget()
	require.NoError(t, j.Rollback(context.Background()))
}

func TestTrace(t *testing.T) {
	var seen []string
	ctx := WithTrace(context.Background(), func(s string) { seen = append(seen, s) })
	var j Journal
	require.NoError(t, j.Run(ctx, Step{Name: "a"}, Step{Name: "b", Do: func(ctx context.Context) error {
		Trace(ctx, "b-inside")
		return nil
	}}))
	require.Equal(t, []string{"a", "b", "b-inside"}, seen)
	Trace(context.Background(), "nobody listens") // no hook: nothing happens
}

func TestJoin(t *testing.T) {
	require.NoError(t, Join())
	require.NoError(t, Join(nil, nil))
	a, b := errors.New("a"), errors.New("b\nc")
	err := Join(a, nil, b)
	require.Equal(t, "a; b\nc", err.Error())
	require.ErrorIs(t, err, a)
	require.ErrorIs(t, err, b)
	require.False(t, strings.HasSuffix(err.Error(), "; "))
}
