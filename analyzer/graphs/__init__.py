"""Call graph and state-ownership graph per snapshot, built from resolved facts."""
