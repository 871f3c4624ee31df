export type Theme = 'light' | 'dark';

const KEY = 'runner.theme';

function initial(): Theme {
  const saved = localStorage.getItem(KEY);
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** The colour theme: the saved choice, else the system's; kept on <html data-theme>. */
class ThemeState {
  current = $state<Theme>(initial());

  constructor() {
    this.apply();
  }

  toggle(): void {
    this.set(this.current === 'dark' ? 'light' : 'dark');
  }

  set(theme: Theme): void {
    this.current = theme;
    localStorage.setItem(KEY, theme);
    this.apply();
  }

  private apply(): void {
    document.documentElement.dataset.theme = this.current;
  }
}

export const theme = new ThemeState();
