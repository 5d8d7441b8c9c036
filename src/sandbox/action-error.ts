/** Why a control action (or a payer's click on a sandbox page) was refused; `status` is its HTTP status. */
export type ActionError = { readonly status: 400 | 404 | 409; readonly message: string }

export const notFound = (message: string): ActionError => ({ status: 404, message })
export const conflict = (message: string): ActionError => ({ status: 409, message })
export const badRequest = (message: string): ActionError => ({ status: 400, message })
