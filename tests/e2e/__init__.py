"""End-to-end tests of the course in JupyterLab and headless Chromium (``make e2e``)."""
