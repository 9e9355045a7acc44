"""Tools written by agents: proposals kept outside the live folder, gated in the sandbox, promoted."""
