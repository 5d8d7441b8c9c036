export const id = (): number => Math.random()
