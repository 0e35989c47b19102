// The translation unit that builds tests/support/engine_pch.h into the precompiled header the engine tests reuse.
