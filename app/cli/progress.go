package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
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

// newBar draws the bar and the elapsed time; the count, the rate and the time left are in its
// description (progressText), because the library's own would show "(0/-)" for an unknown total
// and "0 it/hr" before the first item is done.
func newBar(w io.Writer, stage string, total int64) *progressbar.ProgressBar {
	if total <= 0 {
		total = -1 // spinner
	}
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(stage),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
}

// progressText is a bar's description: the stage, then what is known of the count ("12/340",
// or "12" without a total, nothing before the first item), the rate once it is at least one
// item a minute ("25/s", "3/min") and the time left when both the total and the rate are
// known. Nothing is shown that would read as a zero rate or an empty total.
func progressText(stage string, done, total int64, elapsed time.Duration) string {
	var count string
	switch {
	case total > 0:
		count = fmt.Sprintf("%d/%d", done, total)
	case done > 0:
		count = fmt.Sprint(done)
	}
	var extra []string
	rate := 0.0
	if done > 0 && elapsed >= time.Second {
		rate = float64(done) / elapsed.Seconds()
	}
	switch {
	case rate >= 1:
		extra = append(extra, fmt.Sprintf("%.0f/s", rate))
	case rate*60 >= 1:
		extra = append(extra, fmt.Sprintf("%.0f/min", rate*60))
	default:
		rate = 0
	}
	if rate > 0 && total > done {
		left := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
		extra = append(extra, left.String()+" left")
	}
	s := stage
	if count != "" {
		s += " " + count
	}
	if len(extra) > 0 {
		s += " (" + strings.Join(extra, ", ") + ")"
	}
	return s
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
		pr.bar.Describe(progressText(stage, done, total, time.Since(pr.start)))
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

// Fail clears the bar without a summary (the caller prints the error). It finishes the bar
// rather than leaving it (the library's Exit), because a spinner's own goroutine renders until
// its bar is finished: left alone, it would go on writing over the caller's error.
func (pr *progress) Fail() {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.bar != nil {
		_ = pr.bar.Finish()
		pr.bar = nil
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
