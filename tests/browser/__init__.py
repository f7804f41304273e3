"""Browser tests: the widget in real JupyterLab, in headless Debian Chromium via Playwright."""
