package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/brick-storage/brick/host"
)

// connInfoShape is what --connection-info wants, for messages.
const connInfoShape = `Cinder's connection info, a JSON object such as {"driver_volume_type": "iscsi", "data": {...}}`

// readJSONObjectInput reads the document flag names (a file, or "-" for
// stdin), at most max bytes, and checks that it is one JSON object. Its
// errors name the flag and the file, and say what was expected, so that a
// wrong file is never reported as a problem with a key the user did not
// write.
func readJSONObjectInput(stdin io.Reader, flag, name string, max int64, want string) ([]byte, error) {
	src := flag + " " + name
	r := stdin
	if name == "-" {
		src = flag + " - (stdin)"
	} else {
		f, err := host.OpenInput(name)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", src, fileProblem(err))
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return nil, fmt.Errorf("%s: is a directory; give the file holding %s", src, want)
		}
		r = f
	}
	raw, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read it: %s", src, fileProblem(err))
	}
	if int64(len(raw)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes; expected %s (usually under 4 KiB): is it the right file?", src, max, want)
	}
	if err := checkJSONObject(raw); err != nil {
		return nil, fmt.Errorf("%s: %w; expected %s", src, err, want)
	}
	return raw, nil
}

// fileProblem words an open or read error without repeating the path.
func fileProblem(err error) string {
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.As(err, &pe):
		return pe.Err.Error()
	}
	return err.Error()
}

// checkJSONObject says why raw is not exactly one JSON object.
func checkJSONObject(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return errors.New("it is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return errors.New("its JSON ends early (truncated?)")
		case errors.As(err, &se):
			return fmt.Errorf("it is not JSON (%s, at byte %d)", se.Error(), se.Offset)
		}
		return fmt.Errorf("it is not JSON (%s)", err.Error())
	}
	if dec.InputOffset() != int64(len(raw)) {
		return fmt.Errorf("it has more after the first JSON value (at byte %d)", dec.InputOffset())
	}
	switch v.(type) {
	case map[string]any:
		return nil
	case []any:
		return errors.New("it holds a JSON array")
	case nil:
		return errors.New("it holds JSON null")
	case string:
		return errors.New("it holds a JSON string")
	}
	return errors.New("it holds a JSON number or boolean")
}
