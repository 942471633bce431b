package runner

// OpResultsFlushed is the op of the journal record that says every result
// before it is in the trials' files. A resume writes the results after the
// last such record into the files again; a tool that copies an experiment
// (its journal and files) to another place must copy the files of those
// trials too.
const OpResultsFlushed = opResultsFlushed
