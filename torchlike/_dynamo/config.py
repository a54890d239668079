"""torch._dynamo.config's knobs that torchlike.compile honours."""
enabled = True  # False: compiled functions run eagerly
recompile_limit = 8  # programs per compiled function before it warns and runs new signatures eagerly (torch's)
cache_size_limit = recompile_limit  # (torch's older name)
verbose = False  # warn at each graph break
walk_depth = 16  # how deep the state walk goes from the function (closure -> object -> attribute -> ...)
walk_container_limit = 256  # longer lists/dicts reached from user code are read as constants, not walked
roll_loops = True  # a program's repeated runs of ops (Python loops the trace unrolled) run as lax.scan loops
