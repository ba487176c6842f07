// hostile/only-comment: the file is only this comment.
// TODO: write pi_global
