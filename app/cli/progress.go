package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows long work: a bar when w is a terminal, else nothing until Done prints one
// summary line (so logs and CI output stay clean, as restic and rclone do). Libraries under
// exit/ report through callbacks; a progress turns those calls into the bar. Safe for
// concurrent use.
type progress struct {
	w     io.Writer
	start time.Time

	mu    sync.Mutex
	bar   *progressbar.ProgressBar // nil when w is not a terminal
	stage string
	done  int64
	total int64
}

// newProgress starts reporting on w. total may be 0 (unknown) and change later with Update.
func newProgress(w io.Writer, stage string, total int64) *progress {
	pr := &progress{w: w, start: time.Now(), stage: stage, total: total}
	if isTerminal(w) {
		pr.bar = newBar(w, stage, total)
	}
	return pr
}

func newBar(w io.Writer, stage string, total int64) *progressbar.ProgressBar {
	if total <= 0 {
		total = -1 // spinner
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(stage),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
}

// Update reports done of total for stage; a new stage starts a new bar.
func (pr *progress) Update(stage string, done, total int64) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if stage != pr.stage && pr.bar != nil {
		_ = pr.bar.Finish()
		pr.bar = newBar(pr.w, stage, total)
	} else if total != pr.total && pr.bar != nil {
		pr.bar.ChangeMax64(total)
	}
	pr.stage, pr.done, pr.total = stage, done, total
	if pr.bar != nil {
		_ = pr.bar.Set64(done)
	}
}

// Done clears the bar and prints the summary line, with the elapsed time appended.
func (pr *progress) Done(summary string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.bar != nil {
		_ = pr.bar.Finish()
		pr.bar = nil
	}
	fmt.Fprintf(pr.w, "%s in %s\n", summary, time.Since(pr.start).Round(time.Millisecond))
}

// Fail clears the bar without a summary (the caller prints the error).
func (pr *progress) Fail() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.bar != nil {
		_ = pr.bar.Exit()
		pr.bar = nil
		fmt.Fprintln(pr.w)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
