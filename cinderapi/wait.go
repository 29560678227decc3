package cinderapi

import (
	"context"
	"fmt"
	"time"

	"github.com/brick-storage/brick/apierr"
)

// watched is a kind of Cinder resource (a volume, a snapshot) whose
// creation or deletion brick waits for.
type watched[T any] struct {
	what    string // "volume", "snapshot": for messages
	timeout time.Duration
	gap     time.Duration // the first gap between reads
	get     func(ctx context.Context, id string) (*T, error)
	status  func(*T) string
	del     func(ctx context.Context, id string) error
}

// created waits until resource id, being created, is available and
// returns it. One that ends in error is deleted again and reported; one
// that disappears is reported. Errors name op and ref.
func (w watched[T]) created(ctx context.Context, op, ref, id string) (*T, error) {
	var got *T
	err := w.poll(ctx, op, id, func(cur *T) (bool, error) {
		switch {
		case cur == nil:
			return false, &apierr.Error{Service: Service, Op: op, Volume: ref, Kind: apierr.ErrNotFound, Message: fmt.Sprintf("%s %s disappeared while being created", w.what, id)}
		case w.status(cur) == "available":
			got = cur
			return true, nil
		case w.status(cur) == "error":
			_ = w.del(ctx, id)
			return false, &apierr.Error{Service: Service, Op: op, Volume: ref, Kind: apierr.ErrInvalidState,
				Message: fmt.Sprintf("Cinder could not create %s %s (status error; deleted again)", w.what, id)}
		}
		return false, nil
	})
	return got, err
}

// deleted deletes resource id and waits until Cinder no longer lists it.
// One already gone is success.
func (w watched[T]) deleted(ctx context.Context, op, id string) error {
	if err := mapError(op, id, w.del(ctx, id)); err != nil {
		if isKind(err, apierr.ErrNotFound) {
			return nil
		}
		return err
	}
	return w.poll(ctx, op, id, func(cur *T) (bool, error) {
		if cur == nil {
			return true, nil
		}
		if w.status(cur) == "error_deleting" {
			return false, &apierr.Error{Service: Service, Op: op, Volume: id, Kind: apierr.ErrInvalidState, Message: fmt.Sprintf("Cinder could not delete the %s (status error_deleting)", w.what)}
		}
		return false, nil
	})
}

// poll reads resource id, with a growing gap, until done says so or
// fails, or the timeout ends; done sees nil once Cinder says it is not
// found.
func (w watched[T]) poll(ctx context.Context, op, id string, done func(*T) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, w.timeout)
	defer cancel()
	gap := max(w.gap, time.Millisecond)
	timer := time.NewTimer(gap)
	defer timer.Stop()
	last := "nothing"
	for {
		v, err := w.get(ctx, id)
		switch {
		case err != nil && isKind(err, apierr.ErrNotFound):
			v, err = nil, nil
		case err != nil && ctx.Err() == nil:
			return err
		}
		if err == nil {
			if v != nil {
				last = w.status(v)
			}
			if ok, derr := done(v); ok || derr != nil {
				return derr
			}
		}
		select {
		case <-ctx.Done():
			return &apierr.Error{Service: Service, Op: op, Volume: id, Kind: apierr.ErrUnreachable,
				Message: fmt.Sprintf("Cinder did not finish within %s (last status: %s)", w.timeout, last)}
		case <-timer.C:
		}
		gap = min(2*gap, 2*time.Second)
		timer.Reset(gap)
	}
}
