export declare const TIMESTAMP: 1114;
export declare const TIMESTAMPTZ: 1184;
export declare const DATE: 1082;
export declare const INT8: 20;
export declare const NUMERIC: 1700;
export declare const isoTimestamp: (s: string) => string;
export declare const pgliteParsers: Record<number, (s: string) => string>;
