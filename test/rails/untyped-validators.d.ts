// Hand-written types for the CommonJS validators the rails tests use; they ship none.
// Only the members the tests call are declared.

declare module 'arg.js/src/cbu.js' {
  const cbu: { isValid(cbu: string): boolean };
  export = cbu;
}

declare module 'arg.js/src/cuit.js' {
  const cuit: { isValid(cuit: string): boolean };
  export = cuit;
}

declare module 'boleto-brasileiro-validator' {
  const validator: {
    boletoBancarioCodigoBarras(barcode: string): boolean;
    /** Without validateBlocks it only checks the general digit through the barcode. */
    boletoBancarioLinhaDigitavel(line: string, validateBlocks?: boolean): boolean;
  };
  export = validator;
}

declare module '@mrmgomes/boleto-utils' {
  type CodeKind = 'CODIGO_DE_BARRAS' | 'LINHA_DIGITAVEL';
  const boletoUtils: {
    identificarValor(code: string, kind: CodeKind): number;
    /** Factor counted from 1997-10-07. */
    identificarData(code: string, kind: CodeKind): Date;
    /** Factor counted from 1000 on 2025-02-22. */
    identificarDataComNovoFator2025(code: string, kind: CodeKind): Date;
    linhaDigitavel2CodBarras(line: string): string;
    codBarras2LinhaDigitavel(barcode: string, formatted: boolean): string;
  };
  export = boletoUtils;
}
