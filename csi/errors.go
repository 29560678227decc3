package csi

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/brick-storage/brick/apierr"
	"github.com/brick-storage/brick/attach"
)

// invalid is an InvalidArgument status.
func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// notFound is a NotFound status.
func notFound(format string, args ...any) error {
	return status.Errorf(codes.NotFound, format, args...)
}

// toStatus gives err the gRPC code the spec asks for; an error that has
// one already keeps it. op names the call and its object.
func toStatus(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	msg := fmt.Sprintf("%s: %s", op, oneLine(err.Error()))
	return status.Error(codeOf(err), msg)
}

func codeOf(err error) codes.Code {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, apierr.ErrNotFound), errors.Is(err, attach.ErrNoRecord):
		return codes.NotFound
	case errors.Is(err, apierr.ErrInvalidState), errors.Is(err, attach.ErrInUse), errors.Is(err, apierr.ErrUnsupported):
		return codes.FailedPrecondition
	case errors.Is(err, attach.ErrHalfDone):
		return codes.Aborted
	case errors.Is(err, apierr.ErrInvalid):
		return codes.InvalidArgument
	case errors.Is(err, apierr.ErrUnauthorized), errors.Is(err, apierr.ErrForbidden):
		return codes.PermissionDenied
	case errors.Is(err, apierr.ErrUnreachable):
		return codes.Unavailable
	}
	return codes.Internal
}
