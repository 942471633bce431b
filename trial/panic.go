package trial

import (
	"fmt"
	"runtime/debug"
)

// PanicError is a panic in training code, recovered by Guard. Its message
// holds the panic value and the stack of the panicking goroutine, so the
// trial's error.txt shows where it happened.
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the goroutine's stack at the panic
}

// Error returns "panic: <value>" followed by the stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("panic: %v\n\n%s", e.Value, e.Stack)
}

// Unwrap returns the panic value if it is an error, else nil.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Guard calls fn and returns its error; if fn panics, Guard returns a
// *PanicError instead of letting the panic escape. Executors wrap every
// call into training code with it, on the goroutine that makes the call.
func Guard(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn()
}
