"""srcgrad's compiler: a Python function in, the source of its derivative out.

The folders read as the pipeline; :mod:`.driver` is the only caller of the stages::

    parse ─▶ normalize ─▶ analyze ─▶ transform (forward | reverse) ─▶ optimize ─▶ emit

- :mod:`.parse`: the function's ``ast``, its file and lines, its free names resolved;
- :mod:`.normalize`: the core language (one operation per statement on names);
- :mod:`.analyze`: facts about the core code (each statement's rule, shapes, sequences,
  activity, aliases, dtypes) and the refusals;
- :mod:`.transform`: the forward (JVP) and reverse (VJP) derivative as a new function;
- :mod:`.optimize`: passes that make it as short as a careful person's;
- :mod:`.emit`: the module's source text, compiled.

``docs/architecture.md`` says what each stage takes and returns.
"""
