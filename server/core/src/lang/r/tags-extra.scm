; R: the shipped tags query covers `f <- function(..)` and calls.
