"""Paper-reproduction reports: tables (CSV) and figures (PNG) built from finished sweep dirs."""
