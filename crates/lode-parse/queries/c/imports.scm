; C includes: the source is the path, without quotes or angle brackets.
(preproc_include path: (_) @source) @import
