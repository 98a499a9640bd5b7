// (removed once the first tool lands)
