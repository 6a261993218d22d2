// Mail the site sends (password reset links), through the SMTP server of the smtp.* options.
import nodemailer from 'nodemailer';
import type { Config } from '../config/load.ts';

export function mailConfigured(config: Config): boolean {
  return !!config.str('smtp.server');
}

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export async function sendMail(config: Config, mail: Mail): Promise<void> {
  const [host, port] = config.str('smtp.server').split(':');
  const user = config.str('smtp.user');
  const transport = nodemailer.createTransport({
    host,
    port: port ? Number(port) : 25,
    secure: false,
    requireTLS: config.bool('smtp.starttls'),
    ignoreTLS: !config.bool('smtp.starttls'),
    ...(user ? { auth: { user, pass: config.str('smtp.password') } } : {}),
  });
  const from = config.str('smtp.mail_from') || `no-reply@${host}`;
  await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
}
