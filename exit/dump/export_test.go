package dump

// CheckFile is checkFile, for the benchmark of the check pass alone.
var CheckFile = checkFile
